// Copies: copy (src broadcast to self's shape) and its in-place form
// copy_, alias_copy, clone, _to_copy, detach/lift_fresh copies and the
// dim-order ops (_to_dim_order_copy, _clone_dim_order,
// _empty_dim_order). Out's dim order is the target layout; a copy reads
// self in its own layout and writes out in out's.

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

// copy(self, src): src broadcast to self's shape, in out's dtype.
Tensor& copy_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 const Tensor& src,
                 bool non_blocking,
                 Tensor& out) {
  const char* op = "copy.out";
  (void)non_blocking;
  Shape shape;
  if (!broadcast_shape(ctx, op, {&self, &src}, &shape)) {
    return out;
  }
  if (shape.ref() != self.sizes()) {
    fail_arg(ctx, op, "src does not broadcast to self's shape");
    return out;
  }
  View view;
  view.shape = shape;
  const Operand source = broadcast_operand(src, self.sizes());
  for (size_t d = 0; d < shape.ndim; ++d) {
    view.strides[d] = source.strides[d];
  }
  copy_view(ctx, op, src, view, out);
  return out;
}

// In place: self = src broadcast to self's shape. The emitter uses it to
// initialize loop-carried values.
Tensor& copy_(KernelRuntimeContext& ctx,
              Tensor& self,
              const Tensor& src,
              bool non_blocking) {
  return copy_out(ctx, self, src, non_blocking, self);
}

Tensor& alias_copy_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       Tensor& out) {
  copy_view(ctx, "alias_copy.out", self, tensor_view(self), out);
  return out;
}

Tensor& clone_out(KernelRuntimeContext& ctx,
                  const Tensor& self,
                  std::optional<int64_t> memory_format,
                  Tensor& out) {
  (void)memory_format; // the layout is out's dim order
  copy_view(ctx, "clone.out", self, tensor_view(self), out);
  return out;
}

Tensor& to_copy_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    bool non_blocking,
                    std::optional<int64_t> memory_format,
                    Tensor& out) {
  (void)non_blocking;
  (void)memory_format;
  copy_view(ctx, "_to_copy.out", self, tensor_view(self), out);
  return out;
}

Tensor& _to_dim_order_copy_out(KernelRuntimeContext& ctx,
                               const Tensor& self,
                               bool non_blocking,
                               std::optional<IntArrayRef> dim_order,
                               Tensor& out) {
  const char* op = "dim_order_ops::_to_dim_order_copy.out";
  (void)non_blocking;
  if (dim_order.has_value()) {
    const auto out_order = out.dim_order();
    bool same = dim_order->size() == out_order.size();
    for (size_t i = 0; same && i < out_order.size(); ++i) {
      same = (*dim_order)[i] == static_cast<int64_t>(out_order[i]);
    }
    if (!same) {
      fail_arg(ctx, op, "dim_order does not match out's dim order");
      return out;
    }
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  return out;
}

// Plain copies under other names: autograd bookkeeping (detach,
// lift_fresh) and host/device transfers, which are copies on a CPU.
#define ET_PLAIN_COPY_KERNEL(fn, name)                                     \
  Tensor& fn(KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) { \
    copy_view(ctx, name, self, tensor_view(self), out);                    \
    return out;                                                            \
  }
ET_PLAIN_COPY_KERNEL(detach_copy_out, "detach_copy.out")
ET_PLAIN_COPY_KERNEL(lift_fresh_copy_out, "lift_fresh_copy.out")
ET_PLAIN_COPY_KERNEL(_h2d_copy_out, "et_copy::_h2d_copy.out")
ET_PLAIN_COPY_KERNEL(_d2h_copy_out, "et_copy::_d2h_copy.out")
#undef ET_PLAIN_COPY_KERNEL

Tensor& _clone_dim_order_out(KernelRuntimeContext& ctx,
                             const Tensor& self,
                             bool non_blocking,
                             std::optional<IntArrayRef> dim_order,
                             Tensor& out) {
  return _to_dim_order_copy_out(ctx, self, non_blocking, dim_order, out);
}

// empty with a dim order: only the shape matters (out already has its dim
// order).
Tensor& _empty_dim_order_out(KernelRuntimeContext& ctx,
                             IntArrayRef size,
                             std::optional<IntArrayRef> dim_order,
                             Tensor& out) {
  (void)dim_order;
  const char* op = "dim_order_ops::_empty_dim_order.out";
  Shape shape;
  if (shape_from_sizes(ctx, op, size, &shape)) {
    resize_out(ctx, op, "out", out, shape.ref());
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
