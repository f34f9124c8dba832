// tril and triu: keep the elements on one side of a diagonal of the
// last two dims, zero the others.

#include <cstring>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Keeps the elements on one side of a diagonal of the last two dims and
// zeroes the others.
Tensor& triangle(KernelRuntimeContext& ctx,
                 const char* op,
                 const Tensor& self,
                 int64_t diagonal,
                 Tensor& out,
                 bool lower) {
  if (self.dim() < 2) {
    fail_arg(ctx, op, "self must have at least 2 dims");
    return out;
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  if (ctx.failure_state() != Error::Ok ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  const int64_t rows = out.size(-2);
  const int64_t cols = out.size(-1);
  const int64_t matrices = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  const size_t elem = out.element_size();
  char* data = static_cast<char*>(out.mutable_data_ptr());
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const bool keep = lower ? c - r <= diagonal : c - r >= diagonal;
        if (!keep) {
          std::memset(data + ((m * rows + r) * cols + c) * elem, 0, elem);
        }
      }
    }
  }
  return out;
}

} // namespace

Tensor& tril_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 int64_t diagonal,
                 Tensor& out) {
  return triangle(ctx, "tril.out", self, diagonal, out, /*lower=*/true);
}

Tensor& triu_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 int64_t diagonal,
                 Tensor& out) {
  return triangle(ctx, "triu.out", self, diagonal, out, /*lower=*/false);
}

} // namespace native
} // namespace executor
} // namespace torch
