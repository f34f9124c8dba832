// Pairwise p-norm distances: _cdist_forward and _pdist_forward.

#include <cinttypes>
#include <cmath>
#include <limits>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// The p-norm of the difference of two length-m rows; p = 0 counts
// differing entries, p = inf takes the largest difference.
template <typename T>
double distance(const T* a, const T* b, int64_t m, double p) {
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::abs(internal::convert<double>(a[k]) -
                              internal::convert<double>(b[k]));
    if (p == 0) {
      acc += d != 0 ? 1 : 0;
    } else if (std::isinf(p)) {
      acc = d > acc ? d : acc;
    } else {
      acc += std::pow(d, p);
    }
  }
  return (p == 0 || std::isinf(p)) ? acc : std::pow(acc, 1.0 / p);
}

} // namespace

Tensor& _cdist_forward_out(KernelRuntimeContext& ctx,
                           const Tensor& x1,
                           const Tensor& x2,
                           double p,
                           std::optional<int64_t> compute_mode,
                           Tensor& out) {
  const char* op = "_cdist_forward.out";
  (void)compute_mode; // only affects how eager computes p = 2
  bool batch_match = x1.dim() == x2.dim() && x1.dim() >= 2;
  for (ssize_t d = 0; batch_match && d + 2 < x1.dim(); ++d) {
    batch_match = x1.size(d) == x2.size(d);
  }
  if (!batch_match || x1.size(-1) != x2.size(-1) || p < 0 ||
      !check_same_dtype(ctx, op, "x2", x2, x1) ||
      !check_same_dtype(ctx, op, "out", out, x1) ||
      !check_default_dim_order(ctx, op, {&x1, &x2, &out})) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx,
               op,
               "x1 and x2 must be [..., P, M] and [..., R, M] with "
               "equal batch dims, and p >= 0");
    }
    return out;
  }
  Shape shape = tensor_view(x1).shape;
  shape.sizes[shape.ndim - 1] = x2.size(-2);
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  const int64_t rows1 = x1.size(-2), rows2 = x2.size(-2), m = x1.size(-1);
  const int64_t batches =
      rows1 * rows2 == 0 ? 0 : out.numel() / (rows1 * rows2);
  ET_SWITCH_FLOATHBF16_TYPES(x1.scalar_type(), ctx, op, T, [&] {
    const T* a = x1.const_data_ptr<T>();
    const T* b = x2.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t n = 0; n < batches; ++n) {
      for (int64_t i = 0; i < rows1; ++i) {
        for (int64_t j = 0; j < rows2; ++j) {
          o[(n * rows1 + i) * rows2 + j] = internal::convert<T>(
              distance(a + (n * rows1 + i) * m, b + (n * rows2 + j) * m, m, p));
        }
      }
    }
  });
  return out;
}

// Distances between all pairs i < j of the rows of a 2-d input.
Tensor& _pdist_forward_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           double p,
                           Tensor& out) {
  const char* op = "_pdist_forward.out";
  if (self.dim() != 2 || p < 0 ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self})) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "needs a 2-d input and p >= 0");
    }
    return out;
  }
  const int64_t n = self.size(0), m = self.size(1);
  Shape shape;
  shape.push_back(n * (n - 1) / 2);
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    const T* x = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = i + 1; j < n; ++j) {
        *o++ = internal::convert<T>(distance(x + i * m, x + j * m, m, p));
      }
    }
  });
  return out;
}


} // namespace native
} // namespace executor
} // namespace torch
