// glu: the first half of self along dim times the sigmoid of the
// second half.

#include <cmath>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

// glu: the first half of `dim` gated by the sigmoid of the second half.
Tensor& glu_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                int64_t dim,
                Tensor& out) {
  const char* op = "glu.out";
  int64_t d = 0;
  if (self.dim() == 0 || !normalize_dim(ctx, op, dim, self.dim(), &d) ||
      self.size(d) % 2 != 0 || !check_same_dtype(ctx, op, "out", out, self)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "dim must have an even size");
    }
    return out;
  }
  View first = tensor_view(self);
  first.shape.sizes[d] /= 2;
  if (!resize_out(ctx, op, "out", out, first.shape.ref())) {
    return out;
  }
  Operand a;
  a.data = static_cast<const char*>(self.const_data_ptr());
  a.dtype = self.scalar_type();
  for (size_t k = 0; k < first.shape.ndim; ++k) {
    a.strides[k] = first.strides[k];
  }
  Operand b = a;
  b.data += first.shape.sizes[d] * first.strides[d] *
            static_cast<int64_t>(self.element_size());
  const Operand inputs[] = {a, b};
  ET_SWITCH_FLOAT_TYPES(compute_type(self.scalar_type()), ctx, op, C, [&] {
    apply_elementwise<C>(
        out.sizes(), out_operand(out), inputs, [](C x, C gate) {
          return x / (C(1) + std::exp(-gate));
        });
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
