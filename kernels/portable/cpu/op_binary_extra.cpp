// More binary pointwise kernels: maximum/minimum (NaN-propagating),
// Python-style remainder, C-style fmod, atan2 and the bitwise family.

#include <cmath>

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

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

// Bitwise operations exist for integers and bool only.
bool check_integral(KernelRuntimeContext& ctx, const char* op, ScalarType t) {
  if (::executorch::runtime::isIntegralType(t, /*include_bool=*/true)) {
    return true;
  }
  fail_arg(ctx,
           op,
           "needs integral or bool inputs, got %s",
           ::executorch::runtime::toString(t));
  return false;
}

#define ET_BITWISE_MAKER(name, expr)                    \
  auto name##_maker() {                                 \
    return [](auto zero) {                              \
      using T = decltype(zero);                         \
      return [](T x, T y) -> T {                        \
        if constexpr (std::is_integral<T>::value) {     \
          return static_cast<T>(expr);                  \
        } else {                                        \
          return T(0); /* rejected by check_integral */ \
        }                                               \
      };                                                \
    };                                                  \
  }
ET_BITWISE_MAKER(bitwise_and, x& y)
ET_BITWISE_MAKER(bitwise_or, x | y)
ET_BITWISE_MAKER(bitwise_xor, x ^ y)
// Shifts by a negative or too large amount give 0 (or -1 for negative
// values shifted right), as PyTorch defines them, instead of C++'s
// undefined behaviour.
ET_BITWISE_MAKER(bitwise_left_shift,
                 y < T(0) || y >= T(sizeof(T) * 8) ? T(0) : T(x << y))
ET_BITWISE_MAKER(bitwise_right_shift,
                 y < T(0) || y >= T(sizeof(T) * 8) ? T(x < T(0) ? -1 : 0)
                                                   : T(x >> y))
#undef ET_BITWISE_MAKER

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

// Tensor-tensor and tensor-scalar forms of an integral-only operation;
// the scalar overload is "Scalar_out" or, for shifts, "Tensor_Scalar_out".
#define ET_INTEGRAL_BINARY_KERNELS(name, scalar_fn, scalar_overload)     \
  Tensor& name##_tensor_out(KernelRuntimeContext& ctx,                   \
                            const Tensor& self,                          \
                            const Tensor& other,                         \
                            Tensor& out) {                               \
    const char* op = #name ".Tensor_out";                                \
    if (!check_integral(ctx, op, result_type(self, other))) {            \
      return out;                                                        \
    }                                                                    \
    return binary_out(ctx, op, self, other, out, name##_maker());        \
  }                                                                      \
  Tensor& name##scalar_fn(KernelRuntimeContext& ctx,                     \
                          const Tensor& self,                            \
                          const Scalar& other,                           \
                          Tensor& out) {                                 \
    const char* op = #name "." scalar_overload;                          \
    if (!check_integral(                                                 \
            ctx, op, promote_with_scalar(self.scalar_type(), other))) {  \
      return out;                                                        \
    }                                                                    \
    return binary_scalar_out(ctx, op, self, other, out, name##_maker()); \
  }
ET_INTEGRAL_BINARY_KERNELS(bitwise_and, _scalar_out, "Scalar_out")
ET_INTEGRAL_BINARY_KERNELS(bitwise_or, _scalar_out, "Scalar_out")
ET_INTEGRAL_BINARY_KERNELS(bitwise_xor, _scalar_out, "Scalar_out")
ET_INTEGRAL_BINARY_KERNELS(bitwise_left_shift,
                           _tensor_scalar_out,
                           "Tensor_Scalar_out")
ET_INTEGRAL_BINARY_KERNELS(bitwise_right_shift,
                           _tensor_scalar_out,
                           "Tensor_Scalar_out")
#undef ET_INTEGRAL_BINARY_KERNELS

Tensor& bitwise_not_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        Tensor& out) {
  const char* op = "bitwise_not.out";
  if (!check_integral(ctx, op, self.scalar_type())) {
    return out;
  }
  return unary_out(ctx, op, self, out, [](auto zero) {
    using T = decltype(zero);
    return [](T x) -> T {
      if constexpr (std::is_same<T, bool>::value) {
        return !x;
      } else if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(~x);
      } else {
        return x; // rejected by check_integral
      }
    };
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

} // namespace native
} // namespace executor
} // namespace torch
