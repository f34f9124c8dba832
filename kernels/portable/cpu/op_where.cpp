// where.self: condition ? self : other, all three broadcast together.

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

Tensor& where_self_out(KernelRuntimeContext& ctx,
                       const Tensor& condition,
                       const Tensor& self,
                       const Tensor& other,
                       Tensor& out) {
  const char* op = "where.self_out";
  const ScalarType common = result_type(self, other);
  if (condition.scalar_type() != ScalarType::Bool &&
      condition.scalar_type() != ScalarType::Byte) {
    fail_arg(ctx, op, "'condition' must be bool or uint8");
    return out;
  }
  if (!check_can_cast(ctx, op, common, out) ||
      !resize_to_broadcast(ctx, op, {&condition, &self, &other}, out)) {
    return out;
  }
  ET_SWITCH_REALB_TYPES(compute_type(common), ctx, op, CTYPE, [&] {
    map_broadcast<CTYPE>(
        out,
        [](CTYPE c, CTYPE x, CTYPE y) { return c != CTYPE(0) ? x : y; },
        condition,
        self,
        other);
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
