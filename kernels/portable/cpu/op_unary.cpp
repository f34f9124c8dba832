// Unary pointwise kernels. Floating functions (exp, tanh, ...) give float
// results for integral inputs, as in PyTorch; the others keep the type.

#include <cmath>

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

#define ET_FLOAT_UNARY_KERNEL(name, expr)                           \
  Tensor& name##_out(                                               \
      KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) { \
    return unary_out<ResultKind::kFloating>(                        \
        ctx, #name ".out", self, out, [](auto zero) {               \
          using T = decltype(zero);                                 \
          return [](T x) { return static_cast<T>(expr); };          \
        });                                                         \
  }

ET_FLOAT_UNARY_KERNEL(exp, std::exp(x))
ET_FLOAT_UNARY_KERNEL(expm1, std::expm1(x))
ET_FLOAT_UNARY_KERNEL(log, std::log(x))
ET_FLOAT_UNARY_KERNEL(log1p, std::log1p(x))
ET_FLOAT_UNARY_KERNEL(log2, std::log2(x))
ET_FLOAT_UNARY_KERNEL(log10, std::log10(x))
ET_FLOAT_UNARY_KERNEL(sqrt, std::sqrt(x))
ET_FLOAT_UNARY_KERNEL(rsqrt, T(1) / std::sqrt(x))
ET_FLOAT_UNARY_KERNEL(reciprocal, T(1) / x)
ET_FLOAT_UNARY_KERNEL(sin, std::sin(x))
ET_FLOAT_UNARY_KERNEL(cos, std::cos(x))
ET_FLOAT_UNARY_KERNEL(tan, std::tan(x))
ET_FLOAT_UNARY_KERNEL(asin, std::asin(x))
ET_FLOAT_UNARY_KERNEL(acos, std::acos(x))
ET_FLOAT_UNARY_KERNEL(atan, std::atan(x))
ET_FLOAT_UNARY_KERNEL(sinh, std::sinh(x))
ET_FLOAT_UNARY_KERNEL(cosh, std::cosh(x))
ET_FLOAT_UNARY_KERNEL(tanh, std::tanh(x))
ET_FLOAT_UNARY_KERNEL(asinh, std::asinh(x))
ET_FLOAT_UNARY_KERNEL(acosh, std::acosh(x))
ET_FLOAT_UNARY_KERNEL(atanh, std::atanh(x))
ET_FLOAT_UNARY_KERNEL(erf, std::erf(x))
ET_FLOAT_UNARY_KERNEL(sigmoid, T(1) / (T(1) + std::exp(-x)))
#undef ET_FLOAT_UNARY_KERNEL

// Kernels whose result keeps the input type; `T` may be any real type or
// bool.
#define ET_SAME_TYPE_UNARY_KERNEL(name, expr)                       \
  Tensor& name##_out(                                               \
      KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) { \
    return unary_out(ctx, #name ".out", self, out, [](auto zero) {  \
      using T = decltype(zero);                                     \
      return [](T x) { return static_cast<T>(expr); };              \
    });                                                             \
  }

ET_SAME_TYPE_UNARY_KERNEL(abs, x < T(0) ? T(-x) : x)
ET_SAME_TYPE_UNARY_KERNEL(relu, x > T(0) ? x : T(0))
ET_SAME_TYPE_UNARY_KERNEL(sign, (T(0) < x) - (x < T(0)))
#undef ET_SAME_TYPE_UNARY_KERNEL

// Rounding is the identity on integers.
#define ET_ROUNDING_KERNEL(name, fn)                                \
  Tensor& name##_out(                                               \
      KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) { \
    return unary_out(ctx, #name ".out", self, out, [](auto zero) {  \
      using T = decltype(zero);                                     \
      return [](T x) {                                              \
        if constexpr (std::is_floating_point<T>::value) {           \
          return static_cast<T>(fn(x));                             \
        } else {                                                    \
          return x;                                                 \
        }                                                           \
      };                                                            \
    });                                                             \
  }

ET_ROUNDING_KERNEL(ceil, std::ceil)
ET_ROUNDING_KERNEL(floor, std::floor)
ET_ROUNDING_KERNEL(trunc, std::trunc)
ET_ROUNDING_KERNEL(round, std::nearbyint)
#undef ET_ROUNDING_KERNEL

Tensor& neg_out(KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) {
  if (!check_not_bool(ctx, "neg.out", "self", self.scalar_type())) {
    return out;
  }
  return unary_out(ctx, "neg.out", self, out, [](auto zero) {
    using T = decltype(zero);
    return [](T x) { return static_cast<T>(-x); };
  });
}

Tensor& gelu_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 std::string_view approximate,
                 Tensor& out) {
  if (approximate != "none" && approximate != "tanh") {
    fail_arg(ctx, "gelu.out", "approximate must be 'none' or 'tanh'");
    return out;
  }
  const bool use_tanh = approximate == "tanh";
  return unary_out<ResultKind::kFloating>(
      ctx, "gelu.out", self, out, [use_tanh](auto zero) {
        using T = decltype(zero);
        return [use_tanh](T x) -> T {
          if (use_tanh) {
            const T inner =
                T(0.7978845608028654) * (x + T(0.044715) * x * x * x);
            return T(0.5) * x * (T(1) + std::tanh(inner));
          }
          return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
        };
      });
}

Tensor& hardtanh_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     const Scalar& min_val,
                     const Scalar& max_val,
                     Tensor& out) {
  return unary_out(ctx, "hardtanh.out", self, out, [&](auto zero) {
    using T = decltype(zero);
    const T lo = min_val.to<T>();
    const T hi = max_val.to<T>();
    return [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); };
  });
}

Tensor& leaky_relu_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       const Scalar& negative_slope,
                       Tensor& out) {
  return unary_out<ResultKind::kFloating>(
      ctx, "leaky_relu.out", self, out, [&](auto zero) {
        using T = decltype(zero);
        const T slope = negative_slope.to<T>();
        return [slope](T x) { return x > T(0) ? x : x * slope; };
      });
}

Tensor& clamp_out(KernelRuntimeContext& ctx,
                  const Tensor& self,
                  const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max,
                  Tensor& out) {
  return unary_out(ctx, "clamp.out", self, out, [&](auto zero) {
    using T = decltype(zero);
    const bool has_lo = min.has_value();
    const bool has_hi = max.has_value();
    const T lo = has_lo ? min->to<T>() : T(0);
    const T hi = has_hi ? max->to<T>() : T(0);
    return [=](T x) {
      x = has_lo && x < lo ? lo : x;
      return has_hi && x > hi ? hi : x;
    };
  });
}

Tensor& pow_tensor_scalar_out(KernelRuntimeContext& ctx,
                              const Tensor& self,
                              const Scalar& exponent,
                              Tensor& out) {
  return binary_scalar_out(
      ctx, "pow.Tensor_Scalar_out", self, exponent, out, [](auto zero) {
        using T = decltype(zero);
        return [](T x, T e) { return static_cast<T>(std::pow(x, e)); };
      });
}

Tensor& pow_tensor_tensor_out(KernelRuntimeContext& ctx,
                              const Tensor& self,
                              const Tensor& exponent,
                              Tensor& out) {
  return binary_out(
      ctx, "pow.Tensor_Tensor_out", self, exponent, out, [](auto zero) {
        using T = decltype(zero);
        return [](T x, T e) { return static_cast<T>(std::pow(x, e)); };
      });
}

} // namespace native
} // namespace executor
} // namespace torch
