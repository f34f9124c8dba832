// Bitwise operators on integers and bool: and, or, xor, the shifts
// (tensor-tensor and tensor-scalar forms) and not.

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/wrapping.h>

namespace torch {
namespace executor {
namespace native {

namespace {

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
                 y < T(0) || y >= T(sizeof(T) * 8)
                     ? T(0)
                     : internal::wrapping_shift_left(x, y))
ET_BITWISE_MAKER(bitwise_right_shift,
                 y < T(0) || y >= T(sizeof(T) * 8) ? T(x < T(0) ? -1 : 0)
                                                   : T(x >> y))
#undef ET_BITWISE_MAKER

} // namespace

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

} // namespace native
} // namespace executor
} // namespace torch
