// isnan/isinf, elu, and kernels that fill or copy whole tensors
// (fill, full_like, scalar_tensor, copy, alias_copy, masked_fill).

#include <cmath>
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
  for (int64_t s : size) {
    if (s < 0 || shape.ndim == kMaxDims) {
      fail_arg(ctx, "empty.out", "invalid size");
      return out;
    }
    shape.push_back(s);
  }
  resize_out(ctx, "empty.out", "out", out, shape.ref());
  return out;
}

Tensor& empty_strided_out(KernelRuntimeContext& ctx,
                          IntArrayRef size,
                          IntArrayRef stride,
                          Tensor& out) {
  (void)stride; // out's dim order decides the layout
  return empty_out(ctx, size, std::nullopt, out);
}

// Dropout at inference (or p == 0) is the identity with an all-true mask;
// random masks are not supported.
std::tuple<Tensor&, Tensor&> native_dropout_out(KernelRuntimeContext& ctx,
                                                const Tensor& input,
                                                double p,
                                                std::optional<bool> train,
                                                Tensor& out,
                                                Tensor& mask) {
  const char* op = "native_dropout.out";
  std::tuple<Tensor&, Tensor&> result(out, mask);
  if (train.value_or(true) && p != 0.0) {
    fail_arg(ctx, op, "training-mode dropout (random masks) is not supported");
    return result;
  }
  copy_view(ctx, op, input, tensor_view(input), out);
  if (ctx.failure_state() == Error::Ok && resize_like(ctx, op, mask, input)) {
    fill_with(ctx, op, Scalar(true), mask);
  }
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
