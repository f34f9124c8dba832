// Unary pointwise kernels: math functions (exp, log, sin, erf, ...),
// activations (relu, sigmoid, gelu, elu, hardtanh, softplus, ...), rounding,
// abs, neg, sign, clamp and the isnan/isinf tests. Floating functions give
// float results for integral inputs, as in PyTorch; the others keep the type.

#include <cmath>
#include <complex>

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
ET_FLOAT_UNARY_KERNEL(silu, x / (T(1) + std::exp(-x)))
ET_FLOAT_UNARY_KERNEL(mish, x* std::tanh(std::log1p(std::exp(x))))
ET_FLOAT_UNARY_KERNEL(hardsigmoid,
                      std::min(std::max(x + T(3), T(0)), T(6)) / T(6))
ET_FLOAT_UNARY_KERNEL(hardswish,
                      x* std::min(std::max(x + T(3), T(0)), T(6)) / T(6))
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

ET_SAME_TYPE_UNARY_KERNEL(relu, x > T(0) ? x : T(0))
ET_SAME_TYPE_UNARY_KERNEL(sign, (T(0) < x) - (x < T(0)))
#undef ET_SAME_TYPE_UNARY_KERNEL

namespace {

// |z| of each element of a complex tensor, into the real `out` (a magnitude
// spectrum after an FFT).
template <typename R>
void complex_abs(const Tensor& self, const Tensor& out) {
  const auto* in = static_cast<const std::complex<R>*>(self.const_data_ptr());
  R* result = out.mutable_data_ptr<R>();
  for (ssize_t i = 0; i < self.numel(); ++i) {
    result[i] = std::abs(in[i]);
  }
}

} // namespace

Tensor& abs_out(KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) {
  const char* op = "abs.out";
  const ScalarType t = self.scalar_type();
  if (t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble) {
    const bool wide = t == ScalarType::ComplexDouble;
    if (check_dtype(ctx,
                    op,
                    "out",
                    out,
                    wide ? ScalarType::Double : ScalarType::Float) &&
        check_default_dim_order(ctx, op, {&self, &out}) &&
        resize_like(ctx, op, out, self)) {
      if (wide) {
        complex_abs<double>(self, out);
      } else {
        complex_abs<float>(self, out);
      }
    }
    return out;
  }
  return unary_out(ctx, op, self, out, [](auto zero) {
    using T = decltype(zero);
    return [](T x) { return x < T(0) ? T(-x) : x; };
  });
}

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

Tensor& softplus_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     const Scalar& beta,
                     const Scalar& threshold,
                     Tensor& out) {
  return unary_out<ResultKind::kFloating>(
      ctx, "softplus.out", self, out, [&](auto zero) {
        using T = decltype(zero);
        const T b = beta.to<T>();
        const T t = threshold.to<T>();
        // Above the threshold softplus is x to working precision.
        return [b, t](T x) {
          return x * b > t ? x : std::log1p(std::exp(x * b)) / b;
        };
      });
}

Tensor& logit_out(KernelRuntimeContext& ctx,
                  const Tensor& self,
                  std::optional<double> eps,
                  Tensor& out) {
  return unary_out<ResultKind::kFloating>(
      ctx, "logit.out", self, out, [&](auto zero) {
        using T = decltype(zero);
        const bool clamp = eps.has_value();
        const T lo = clamp ? static_cast<T>(*eps) : T(0);
        return [clamp, lo](T x) {
          if (clamp) {
            x = x < lo ? lo : (x > T(1) - lo ? T(1) - lo : x);
          }
          return std::log(x / (T(1) - x));
        };
      });
}

Tensor& celu_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 const Scalar& alpha,
                 Tensor& out) {
  return unary_out<ResultKind::kFloating>(
      ctx, "celu.out", self, out, [&](auto zero) {
        using T = decltype(zero);
        const T a = alpha.to<T>();
        return [a](T x) { return x > T(0) ? x : a * (std::exp(x / a) - T(1)); };
      });
}

Tensor& round_decimals_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           int64_t decimals,
                           Tensor& out) {
  return unary_out(ctx, "round.decimals_out", self, out, [&](auto zero) {
    using T = decltype(zero);
    // In T, like PyTorch, so halfway cases round the same way; negative
    // decimals round to tens, hundreds, ...
    const T scale = static_cast<T>(std::pow(
        10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)));
    const bool negative = decimals < 0;
    return [scale, negative](T x) {
      if constexpr (std::is_floating_point<T>::value) {
        return negative ? static_cast<T>(std::nearbyint(x / scale) * scale)
                        : static_cast<T>(std::nearbyint(x * scale) / scale);
      } else {
        return x;
      }
    };
  });
}

// clamp with tensor bounds, each optional and broadcast with self.
Tensor& clamp_tensor_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         const std::optional<Tensor>& min,
                         const std::optional<Tensor>& max,
                         Tensor& out) {
  const char* op = "clamp.Tensor_out";
  if (!min.has_value() && !max.has_value()) {
    fail_arg(ctx, op, "at least one of min and max must be given");
    return out;
  }
  // A missing bound is replaced by the other one, with its test disabled.
  const Tensor& lo = min.has_value() ? *min : *max;
  const Tensor& hi = max.has_value() ? *max : *min;
  ScalarType common = result_type(self, lo);
  common = ::executorch::runtime::promoteTypes(common, result_type(self, hi));
  if (!check_can_cast(ctx, op, common, out) ||
      !resize_to_broadcast(ctx, op, {&self, &lo, &hi}, out)) {
    return out;
  }
  const bool has_lo = min.has_value();
  const bool has_hi = max.has_value();
  ET_SWITCH_REALB_TYPES(compute_type(common), ctx, op, T, [&] {
    map_broadcast<T>(
        out,
        [has_lo, has_hi](T x, T l, T h) {
          x = has_lo && x < l ? l : x;
          return has_hi && x > h ? h : x;
        },
        self,
        lo,
        hi);
  });
  return out;
}

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

} // namespace native
} // namespace executor
} // namespace torch
