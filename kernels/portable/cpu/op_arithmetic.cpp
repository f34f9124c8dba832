// Elementwise arithmetic: add, sub, mul, div (all rounding modes),
// floor_divide, rsub, remainder (Python's sign rule), fmod (C's), pow,
// maximum/minimum (NaN-propagating) and atan2. The tensor-tensor and
// tensor-scalar forms of an operator share one element functor.

#include <cmath>
#include <type_traits>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/wrapping.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Integer add, sub and mul wrap around on overflow (util/wrapping.h).
using internal::kWraps;
using internal::Wrapped;

// x + a * y.
template <typename T>
T add_scaled(T x, T a, T y) {
  if constexpr (kWraps<T>) {
    return static_cast<T>(Wrapped<T>(x) + Wrapped<T>(a) * Wrapped<T>(y));
  } else {
    return static_cast<T>(x + a * y);
  }
}

// x - a * y.
template <typename T>
T sub_scaled(T x, T a, T y) {
  if constexpr (kWraps<T>) {
    return static_cast<T>(Wrapped<T>(x) - Wrapped<T>(a) * Wrapped<T>(y));
  } else {
    return static_cast<T>(x - a * y);
  }
}

auto add_maker(const Scalar& alpha) {
  return [&alpha](auto zero) {
    using T = decltype(zero);
    const T a = alpha.to<T>();
    return [a](T x, T y) { return add_scaled(x, a, y); };
  };
}

} // namespace

Tensor& add_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                const Tensor& other,
                const Scalar& alpha,
                Tensor& out) {
  return binary_out(ctx, "add.out", self, other, out, add_maker(alpha));
}

Tensor& add_scalar_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       const Scalar& other,
                       const Scalar& alpha,
                       Tensor& out) {
  return binary_scalar_out(
      ctx, "add.Scalar_out", self, other, out, add_maker(alpha));
}

namespace {

auto sub_maker(const Scalar& alpha) {
  return [&alpha](auto zero) {
    using T = decltype(zero);
    const T a = alpha.to<T>();
    return [a](T x, T y) { return sub_scaled(x, a, y); };
  };
}

auto mul_maker() {
  return [](auto zero) {
    using T = decltype(zero);
    return [](T x, T y) { return internal::wrapping_mul(x, y); };
  };
}

// True division; the result is floating, so T is never integral here.
auto div_maker() {
  return [](auto zero) {
    using T = decltype(zero);
    return [](T x, T y) { return static_cast<T>(x / y); };
  };
}

// Division with rounding_mode "trunc" or "floor". Integer division by zero
// is recorded and reported after the loop instead of trapping.
auto div_mode_maker(bool floor_mode, bool* divided_by_zero) {
  return [floor_mode, divided_by_zero](auto zero) {
    using T = decltype(zero);
    return [floor_mode, divided_by_zero](T x, T y) -> T {
      if constexpr (std::is_floating_point<T>::value) {
        const T q = x / y;
        return floor_mode ? std::floor(q) : std::trunc(q);
      } else {
        if (y == 0) {
          *divided_by_zero = true;
          return T(0);
        }
        const T q = static_cast<T>(x / y);
        if constexpr (std::is_signed<T>::value) {
          const bool inexact = static_cast<T>(q * y) != x;
          if (floor_mode && inexact && ((x < 0) != (y < 0))) {
            return T(q - 1);
          }
        }
        return q;
      }
    };
  };
}

bool parse_rounding_mode(KernelRuntimeContext& ctx,
                         const char* op,
                         std::optional<std::string_view> mode,
                         bool* floor_mode) {
  if (mode.has_value() && *mode != "trunc" && *mode != "floor") {
    fail_arg(ctx, op, "rounding_mode must be 'trunc', 'floor' or None");
    return false;
  }
  *floor_mode = mode.has_value() && *mode == "floor";
  return true;
}

// Division with an optional rounding mode: none is true division
// (`true_div`), otherwise `run` applies the rounding functor. Integer
// division by zero fails the kernel after the loop.
template <typename TrueDiv, typename Run>
Tensor& div_with_mode(KernelRuntimeContext& ctx,
                      const char* op,
                      std::optional<std::string_view> rounding_mode,
                      Tensor& out,
                      TrueDiv true_div,
                      Run run) {
  bool floor_mode = false;
  if (!parse_rounding_mode(ctx, op, rounding_mode, &floor_mode)) {
    return out;
  }
  if (!rounding_mode.has_value()) {
    true_div();
    return out;
  }
  bool divided_by_zero = false;
  run(div_mode_maker(floor_mode, &divided_by_zero));
  if (divided_by_zero) {
    fail_arg(ctx, op, "integer division by zero");
  }
  return out;
}

} // namespace

Tensor& sub_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                const Tensor& other,
                const Scalar& alpha,
                Tensor& out) {
  if (!check_not_bool(ctx, "sub.out", "other", other.scalar_type())) {
    return out;
  }
  return binary_out(ctx, "sub.out", self, other, out, sub_maker(alpha));
}

Tensor& sub_scalar_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       const Scalar& other,
                       const Scalar& alpha,
                       Tensor& out) {
  if (!check_not_bool(ctx, "sub.Scalar_out", "self", self.scalar_type())) {
    return out;
  }
  return binary_scalar_out(
      ctx, "sub.Scalar_out", self, other, out, sub_maker(alpha));
}

Tensor& mul_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                const Tensor& other,
                Tensor& out) {
  return binary_out(ctx, "mul.out", self, other, out, mul_maker());
}

Tensor& mul_scalar_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       const Scalar& other,
                       Tensor& out) {
  return binary_scalar_out(
      ctx, "mul.Scalar_out", self, other, out, mul_maker());
}

Tensor& div_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                const Tensor& other,
                Tensor& out) {
  return binary_out<ResultKind::kFloating>(
      ctx, "div.out", self, other, out, div_maker());
}

Tensor& div_scalar_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       const Scalar& other,
                       Tensor& out) {
  return binary_scalar_out<ResultKind::kFloating>(
      ctx, "div.Scalar_out", self, other, out, div_maker());
}

Tensor& div_out_mode(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     const Tensor& other,
                     std::optional<std::string_view> rounding_mode,
                     Tensor& out) {
  return div_with_mode(
      ctx,
      "div.out_mode",
      rounding_mode,
      out,
      [&] { div_out(ctx, self, other, out); },
      [&](auto maker) {
        binary_out(ctx, "div.out_mode", self, other, out, maker);
      });
}

Tensor& div_scalar_mode_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            const Scalar& other,
                            std::optional<std::string_view> rounding_mode,
                            Tensor& out) {
  return div_with_mode(
      ctx,
      "div.Scalar_mode_out",
      rounding_mode,
      out,
      [&] { div_scalar_out(ctx, self, other, out); },
      [&](auto maker) {
        binary_scalar_out(ctx, "div.Scalar_mode_out", self, other, out, maker);
      });
}

Tensor& floor_divide_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         const Tensor& other,
                         Tensor& out) {
  return div_with_mode(
      ctx,
      "floor_divide.out",
      std::string_view("floor"),
      out,
      [] {}, // a mode is always given
      [&](auto maker) {
        binary_out(ctx, "floor_divide.out", self, other, out, maker);
      });
}

// rsub: other - alpha * self.
Tensor& rsub_scalar_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Scalar& other,
                        const Scalar& alpha,
                        Tensor& out) {
  if (!check_not_bool(ctx, "rsub.Scalar_out", "self", self.scalar_type())) {
    return out;
  }
  return binary_scalar_out(
      ctx, "rsub.Scalar_out", self, other, out, [&alpha](auto zero) {
        using T = decltype(zero);
        const T a = alpha.to<T>();
        return [a](T x, T y) { return sub_scaled(y, a, x); };
      });
}

namespace {

template <typename T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// remainder and fmod share the zero-divisor bookkeeping: integer division
// by zero is recorded and reported after the loop instead of trapping.
auto modulo_maker(bool python_sign, bool* divided_by_zero) {
  return [python_sign, divided_by_zero](auto zero) {
    using T = decltype(zero);
    return [python_sign, divided_by_zero](T x, T y) -> T {
      if constexpr (std::is_floating_point<T>::value) {
        T r = std::fmod(x, y);
        if (python_sign && r != T(0) && ((r < T(0)) != (y < T(0)))) {
          r += y;
        }
        return r;
      } else if constexpr (std::is_same<T, bool>::value) {
        *divided_by_zero = *divided_by_zero || !y;
        return false;
      } else {
        if (y == 0) {
          *divided_by_zero = true;
          return T(0);
        }
        T r = static_cast<T>(x % y);
        if constexpr (std::is_signed<T>::value) {
          if (python_sign && r != 0 && ((r < 0) != (y < 0))) {
            r = static_cast<T>(r + y);
          }
        }
        return r;
      }
    };
  };
}

template <typename Run>
Tensor& modulo(KernelRuntimeContext& ctx,
               const char* op,
               Tensor& out,
               Run run) {
  bool divided_by_zero = false;
  run(&divided_by_zero);
  if (divided_by_zero) {
    fail_arg(ctx, op, "integer division by zero");
  }
  return out;
}

auto extreme_maker(bool take_max) {
  return [take_max](auto zero) {
    using T = decltype(zero);
    return [take_max](T x, T y) -> T {
      if (is_nan(x) || is_nan(y)) {
        return is_nan(x) ? x : y;
      }
      return (take_max ? x > y : x < y) ? x : y;
    };
  };
}

} // namespace

Tensor& maximum_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& other,
                    Tensor& out) {
  return binary_out(ctx, "maximum.out", self, other, out, extreme_maker(true));
}

Tensor& minimum_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& other,
                    Tensor& out) {
  return binary_out(ctx, "minimum.out", self, other, out, extreme_maker(false));
}

Tensor& remainder_tensor_out(KernelRuntimeContext& ctx,
                             const Tensor& self,
                             const Tensor& other,
                             Tensor& out) {
  const char* op = "remainder.Tensor_out";
  return modulo(ctx, op, out, [&](bool* zero) {
    binary_out(ctx, op, self, other, out, modulo_maker(true, zero));
  });
}

Tensor& remainder_scalar_out(KernelRuntimeContext& ctx,
                             const Tensor& self,
                             const Scalar& other,
                             Tensor& out) {
  const char* op = "remainder.Scalar_out";
  return modulo(ctx, op, out, [&](bool* zero) {
    binary_scalar_out(ctx, op, self, other, out, modulo_maker(true, zero));
  });
}

Tensor& fmod_tensor_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Tensor& other,
                        Tensor& out) {
  const char* op = "fmod.Tensor_out";
  return modulo(ctx, op, out, [&](bool* zero) {
    binary_out(ctx, op, self, other, out, modulo_maker(false, zero));
  });
}

Tensor& fmod_scalar_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Scalar& other,
                        Tensor& out) {
  const char* op = "fmod.Scalar_out";
  return modulo(ctx, op, out, [&](bool* zero) {
    binary_scalar_out(ctx, op, self, other, out, modulo_maker(false, zero));
  });
}

Tensor& atan2_out(KernelRuntimeContext& ctx,
                  const Tensor& self,
                  const Tensor& other,
                  Tensor& out) {
  return binary_out<ResultKind::kFloating>(
      ctx, "atan2.out", self, other, out, [](auto zero) {
        using T = decltype(zero);
        return [](T y, T x) { return static_cast<T>(std::atan2(y, x)); };
      });
}

Tensor& pow_scalar_out(KernelRuntimeContext& ctx,
                       const Scalar& self,
                       const Tensor& exponent,
                       Tensor& out) {
  // pow(Scalar, Tensor): the scalar is the base, so swap the operands of
  // the tensor-scalar skeleton.
  return binary_scalar_out(
      ctx, "pow.Scalar_out", exponent, self, out, [](auto zero) {
        using T = decltype(zero);
        return [](T e, T base) { return static_cast<T>(std::pow(base, e)); };
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
