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

Tensor& full_out(KernelRuntimeContext& ctx,
                 IntArrayRef size,
                 const Scalar& fill_value,
                 Tensor& out) {
  const char* op = "full.out";
  Shape shape;
  for (int64_t s : size) {
    if (shape.ndim == kMaxDims || s < 0) {
      fail_arg(ctx, op, "invalid size");
      return out;
    }
    shape.push_back(s);
  }
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, CTYPE, [&] {
    const CTYPE value = fill_value.to<CTYPE>();
    CTYPE* data = out.mutable_data_ptr<CTYPE>();
    for (ssize_t i = 0; i < out.numel(); ++i) {
      data[i] = value;
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
