// mm, bmm and addmm. The inner loop runs along a row of the right-hand
// matrix (i-k-j order) so both operands are read contiguously.

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// out[b] = a[b] (m x k) @ w[b] (k x n) for `batches` contiguous matrices,
// computed in C (float for 16-bit types).
template <typename T>
void batched_matmul(const T* a,
                    const T* w,
                    T* out,
                    int64_t batches,
                    int64_t m,
                    int64_t k,
                    int64_t n) {
  using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
  C row[1024];
  for (int64_t b = 0; b < batches; ++b) {
    const T* ab = a + b * m * k;
    const T* wb = w + b * k * n;
    T* ob = out + b * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j0 = 0; j0 < n; j0 += 1024) {
        const int64_t cols = n - j0 < 1024 ? n - j0 : 1024;
        for (int64_t j = 0; j < cols; ++j) {
          row[j] = C(0);
        }
        for (int64_t p = 0; p < k; ++p) {
          const C x = static_cast<C>(ab[i * k + p]);
          const T* wr = wb + p * n + j0;
          for (int64_t j = 0; j < cols; ++j) {
            row[j] += x * static_cast<C>(wr[j]);
          }
        }
        for (int64_t j = 0; j < cols; ++j) {
          ob[i * n + j0 + j] = static_cast<T>(row[j]);
        }
      }
    }
  }
}

// Checks shapes (ranks `rank`, matching batch and inner dims), dtypes and
// layout, then resizes out to [batch..., m, n].
bool prepare_matmul(KernelRuntimeContext& ctx,
                    const char* op,
                    const Tensor& a,
                    const Tensor& w,
                    const Tensor& out,
                    int64_t rank) {
  if (!check_rank(ctx, op, "self", a, {rank}) ||
      !check_rank(ctx, op, "mat2", w, {rank}) ||
      !check_same_dtype(ctx, op, "mat2", w, a) ||
      !check_same_dtype(ctx, op, "out", out, a) ||
      !check_default_dim_order(ctx, op, {&a, &w, &out})) {
    return false;
  }
  if (a.size(rank - 1) != w.size(rank - 2) ||
      (rank == 3 && a.size(0) != w.size(0))) {
    fail_arg(ctx, op, "self and mat2 shapes cannot be multiplied");
    return false;
  }
  Shape shape;
  if (rank == 3) {
    shape.push_back(a.size(0));
  }
  shape.push_back(a.size(rank - 2));
  shape.push_back(w.size(rank - 1));
  return resize_out(ctx, op, "out", out, shape.ref());
}

Tensor& matmul_impl(KernelRuntimeContext& ctx,
                    const char* op,
                    const Tensor& a,
                    const Tensor& w,
                    Tensor& out,
                    int64_t rank) {
  if (!prepare_matmul(ctx, op, a, w, out, rank)) {
    return out;
  }
  const int64_t batches = rank == 3 ? a.size(0) : 1;
  ET_SWITCH_REALHBBF16_TYPES(a.scalar_type(), ctx, op, T, [&] {
    batched_matmul<T>(a.const_data_ptr<T>(),
                      w.const_data_ptr<T>(),
                      out.mutable_data_ptr<T>(),
                      batches,
                      a.size(rank - 2),
                      a.size(rank - 1),
                      w.size(rank - 1));
  });
  return out;
}

} // namespace

Tensor& mm_out(KernelRuntimeContext& ctx,
               const Tensor& self,
               const Tensor& mat2,
               Tensor& out) {
  return matmul_impl(ctx, "mm.out", self, mat2, out, 2);
}

Tensor& bmm_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                const Tensor& mat2,
                Tensor& out) {
  return matmul_impl(ctx, "bmm.out", self, mat2, out, 3);
}

// addmm: beta * self + alpha * (mat1 @ mat2), self broadcast to the
// product's shape.
Tensor& addmm_out(KernelRuntimeContext& ctx,
                  const Tensor& self,
                  const Tensor& mat1,
                  const Tensor& mat2,
                  const Scalar& beta,
                  const Scalar& alpha,
                  Tensor& out) {
  const char* op = "addmm.out";
  matmul_impl(ctx, op, mat1, mat2, out, 2);
  if (ctx.failure_state() != Error::Ok ||
      !check_same_dtype(ctx, op, "self", self, out)) {
    return out;
  }
  Shape bias_shape;
  if (!broadcast_shape(ctx, op, {&self, &out}, &bias_shape) ||
      bias_shape.ndim != 2 || bias_shape.sizes[0] != out.size(0) ||
      bias_shape.sizes[1] != out.size(1)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "self does not broadcast to the product's shape");
    }
    return out;
  }
  ET_SWITCH_REALB_TYPES(compute_type(out.scalar_type()), ctx, op, C, [&] {
    const C b = beta.to<C>();
    const C a = alpha.to<C>();
    const Operand inputs[] = {broadcast_operand(self, out.sizes()),
                              broadcast_operand(out, out.sizes())};
    apply_elementwise<C>(
        out.sizes(), out_operand(out), inputs, [a, b](C bias, C product) {
          return static_cast<C>(b * bias + a * product);
        });
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
