// Copies that may change dtype or dim order: clone, _to_copy and
// dim_order_ops::_to_dim_order_copy. Out's dim order is the target layout;
// the copy reads self in its own layout and writes out in out's.

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

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

} // namespace native
} // namespace executor
} // namespace torch
