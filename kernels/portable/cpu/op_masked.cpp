// Operators driven by a boolean mask broadcast with self: masked_fill,
// masked_select (dynamically sized out) and masked_scatter.

#include <cstring>

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

Tensor& masked_fill_scalar_out(KernelRuntimeContext& ctx,
                               const Tensor& self,
                               const Tensor& mask,
                               const Scalar& value,
                               Tensor& out) {
  const char* op = "masked_fill.Scalar_out";
  if (!check_dtype(ctx, op, "mask", mask, ScalarType::Bool) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !resize_to_broadcast(ctx, op, {&self, &mask}, out)) {
    return out;
  }
  ET_SWITCH_REALB_TYPES(compute_type(self.scalar_type()), ctx, op, CTYPE, [&] {
    const CTYPE v = value.to<CTYPE>();
    const Operand inputs[] = {broadcast_operand(mask, out.sizes()),
                              broadcast_operand(self, out.sizes()),
                              scalar_operand(v)};
    apply_elementwise<CTYPE>(
        out.sizes(),
        out_operand(out),
        inputs,
        [](CTYPE m, CTYPE x, CTYPE fill) { return m != CTYPE(0) ? fill : x; });
  });
  return out;
}

// masked_select: the elements where mask (broadcast with self) is true, as
// a 1-d tensor; out must be dynamically shaped.
Tensor& masked_select_out(KernelRuntimeContext& ctx,
                          const Tensor& self,
                          const Tensor& mask,
                          Tensor& out) {
  const char* op = "masked_select.out";
  Shape shape;
  if (!check_dtype(ctx, op, "mask", mask, ScalarType::Bool) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !broadcast_shape(ctx, op, {&self, &mask}, &shape)) {
    return out;
  }
  const Operand m = broadcast_operand(mask, shape.ref());
  const Operand x = broadcast_operand(self, shape.ref());
  const size_t elem = self.element_size();
  // Two passes: count to size out, then copy.
  for (int pass = 0; pass < 2; ++pass) {
    int64_t count = 0;
    int64_t counter[kMaxDims] = {};
    int64_t mask_offset = 0;
    int64_t self_offset = 0;
    char* o = static_cast<char*>(out.mutable_data_ptr());
    for (int64_t i = 0; i < shape.numel(); ++i) {
      if (reinterpret_cast<const bool*>(m.data)[mask_offset]) {
        if (pass == 1) {
          std::memcpy(o + count * elem, x.data + self_offset * elem, elem);
        }
        ++count;
      }
      for (int64_t d = static_cast<int64_t>(shape.ndim) - 1; d >= 0; --d) {
        mask_offset += m.strides[d];
        self_offset += x.strides[d];
        if (++counter[d] < shape.sizes[d]) {
          break;
        }
        mask_offset -= m.strides[d] * shape.sizes[d];
        self_offset -= x.strides[d] * shape.sizes[d];
        counter[d] = 0;
      }
    }
    if (pass == 0) {
      Shape flat;
      flat.push_back(count);
      if (!resize_out(ctx, op, "out", out, flat.ref())) {
        return out;
      }
    }
  }
  return out;
}

// masked_scatter: positions where mask (broadcast to self) is true take
// consecutive elements of source, in row-major order.
Tensor& masked_scatter_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           const Tensor& mask,
                           const Tensor& source,
                           Tensor& out) {
  const char* op = "masked_scatter.out";
  if (!check_dtype(ctx, op, "mask", mask, ScalarType::Bool) ||
      !check_same_dtype(ctx, op, "source", source, self) ||
      !check_default_dim_order(ctx, op, {&source})) {
    return out;
  }
  Shape shape;
  if (!broadcast_shape(ctx, op, {&self, &mask}, &shape) ||
      shape.ref() != self.sizes()) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "mask must broadcast to self's shape");
    }
    return out;
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  if (ctx.failure_state() != Error::Ok ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  const Operand m = broadcast_operand(mask, out.sizes());
  const size_t elem = out.element_size();
  const char* src = static_cast<const char*>(source.const_data_ptr());
  char* o = static_cast<char*>(out.mutable_data_ptr());
  int64_t counter[kMaxDims] = {};
  int64_t mask_offset = 0;
  int64_t taken = 0;
  for (ssize_t i = 0; i < out.numel(); ++i) {
    if (reinterpret_cast<const bool*>(m.data)[mask_offset]) {
      if (taken >= source.numel()) {
        fail_arg(ctx, op, "source has fewer elements than mask selects");
        return out;
      }
      std::memcpy(o + i * elem, src + taken * elem, elem);
      ++taken;
    }
    for (int64_t d = out.dim() - 1; d >= 0; --d) {
      mask_offset += m.strides[d];
      if (++counter[d] < out.size(d)) {
        break;
      }
      mask_offset -= m.strides[d] * out.size(d);
      counter[d] = 0;
    }
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
