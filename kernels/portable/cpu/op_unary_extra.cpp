// isnan/isinf, elu, and kernels that fill or copy whole tensors
// (fill, full, full_like, ones, zeros, empty, scalar_tensor, copy,
// alias_copy, masked_fill, inference-mode dropout).

#include <cinttypes>
#include <cmath>
#include <cstring>
#include <tuple>

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Writes `value` to every element of out.
void fill_with(KernelRuntimeContext& ctx,
               const char* op,
               const Scalar& value,
               const Tensor& out) {
  ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, CTYPE, [&] {
    const CTYPE v = value.to<CTYPE>();
    CTYPE* data = out.mutable_data_ptr<CTYPE>();
    for (ssize_t i = 0; i < out.numel(); ++i) {
      data[i] = v;
    }
  });
}

} // namespace

Tensor& isnan_out(KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) {
  return unary_out<ResultKind::kBool>(
      ctx, "isnan.out", self, out, [](auto zero) {
        using T = decltype(zero);
        return [](T x) { return x != x; };
      });
}

Tensor& isinf_out(KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) {
  return unary_out<ResultKind::kBool>(
      ctx, "isinf.out", self, out, [](auto zero) {
        using T = decltype(zero);
        return [](T x) {
          if constexpr (std::is_floating_point<T>::value) {
            return std::isinf(x);
          } else {
            return false;
          }
        };
      });
}

Tensor& elu_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                const Scalar& alpha,
                const Scalar& scale,
                const Scalar& input_scale,
                Tensor& out) {
  return unary_out<ResultKind::kFloating>(
      ctx, "elu.out", self, out, [&](auto zero) {
        using T = decltype(zero);
        const T a = alpha.to<T>();
        const T s = scale.to<T>();
        const T is = input_scale.to<T>();
        return [a, s, is](T x) {
          return x > T(0) ? s * x : s * a * (std::exp(x * is) - T(1));
        };
      });
}

Tensor& fill_scalar_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Scalar& value,
                        Tensor& out) {
  if (resize_like(ctx, "fill.Scalar_out", out, self)) {
    fill_with(ctx, "fill.Scalar_out", value, out);
  }
  return out;
}

Tensor& full_like_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      const Scalar& fill_value,
                      std::optional<int64_t> memory_format,
                      Tensor& out) {
  (void)memory_format; // out's dim order is the layout
  if (resize_like(ctx, "full_like.out", out, self)) {
    fill_with(ctx, "full_like.out", fill_value, out);
  }
  return out;
}

Tensor& scalar_tensor_out(KernelRuntimeContext& ctx,
                          const Scalar& s,
                          Tensor& out) {
  if (resize_out(ctx, "scalar_tensor.out", "out", out, {})) {
    fill_with(ctx, "scalar_tensor.out", s, out);
  }
  return out;
}

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

Tensor& alias_copy_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       Tensor& out) {
  copy_view(ctx, "alias_copy.out", self, tensor_view(self), out);
  return out;
}

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

// empty: only the shape matters; the contents are unspecified.
Tensor& empty_out(KernelRuntimeContext& ctx,
                  IntArrayRef size,
                  std::optional<int64_t> memory_format,
                  Tensor& out) {
  (void)memory_format;
  Shape shape;
  if (shape_from_sizes(ctx, "empty.out", size, &shape)) {
    resize_out(ctx, "empty.out", "out", out, shape.ref());
  }
  return out;
}

Tensor& empty_strided_out(KernelRuntimeContext& ctx,
                          IntArrayRef size,
                          IntArrayRef stride,
                          Tensor& out) {
  (void)stride; // out's dim order decides the layout
  return empty_out(ctx, size, std::nullopt, out);
}

Tensor& full_out(KernelRuntimeContext& ctx,
                 IntArrayRef size,
                 const Scalar& fill_value,
                 Tensor& out) {
  const char* op = "full.out";
  Shape shape;
  if (shape_from_sizes(ctx, op, size, &shape) &&
      resize_out(ctx, op, "out", out, shape.ref())) {
    fill_with(ctx, op, fill_value, out);
  }
  return out;
}

Tensor& ones_out(KernelRuntimeContext& ctx, IntArrayRef size, Tensor& out) {
  return full_out(ctx, size, Scalar(int64_t(1)), out);
}

Tensor& zeros_out(KernelRuntimeContext& ctx, IntArrayRef size, Tensor& out) {
  return full_out(ctx, size, Scalar(int64_t(0)), out);
}

Tensor& fill_tensor_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Tensor& value,
                        Tensor& out) {
  const char* op = "fill.Tensor_out";
  if (value.dim() != 0 || !resize_like(ctx, op, out, self)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "value must be a 0-dim tensor");
    }
    return out;
  }
  // Broadcasting the 0-dim value over out converts it to out's dtype.
  View view = tensor_view(out);
  for (size_t d = 0; d < view.shape.ndim; ++d) {
    view.strides[d] = 0;
  }
  copy_view(ctx, op, value, view, out);
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

// repeat_interleave(repeats): index i repeated repeats[i] times.
Tensor& repeat_interleave_tensor_out(KernelRuntimeContext& ctx,
                                     const Tensor& repeats,
                                     std::optional<int64_t> output_size,
                                     Tensor& out) {
  const char* op = "repeat_interleave.Tensor_out";
  if (repeats.dim() > 1 || !check_same_dtype(ctx, op, "out", out, repeats)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "repeats must be 0-d or 1-d");
    }
    return out;
  }
  ET_SWITCH_INT_TYPES(repeats.scalar_type(), ctx, op, T, [&] {
    const T* r = repeats.const_data_ptr<T>();
    int64_t total = 0;
    for (ssize_t i = 0; i < repeats.numel(); ++i) {
      if (r[i] < 0) {
        fail_arg(ctx, op, "repeats must not be negative");
        return;
      }
      total += r[i];
    }
    if (output_size.has_value() && *output_size != total) {
      fail_arg(ctx,
               op,
               "output_size %" PRId64
               " differs from the sum of "
               "repeats %" PRId64,
               *output_size,
               total);
      return;
    }
    Shape shape;
    shape.push_back(total);
    if (!resize_out(ctx, op, "out", out, shape.ref())) {
      return;
    }
    T* o = out.mutable_data_ptr<T>();
    for (ssize_t i = 0; i < repeats.numel(); ++i) {
      for (T k = 0; k < r[i]; ++k) {
        *o++ = static_cast<T>(i);
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
