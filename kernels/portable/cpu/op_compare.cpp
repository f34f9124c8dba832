// Comparisons (eq, ne, gt, ge, lt, le) and logical ops: computed in the
// promoted input type, written as bool (or whatever dtype out has).

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

#define ET_COMPARE_KERNELS(name, expr)                              \
  Tensor& name##_tensor_out(KernelRuntimeContext& ctx,              \
                            const Tensor& self,                     \
                            const Tensor& other,                    \
                            Tensor& out) {                          \
    return binary_out<ResultKind::kBool>(                           \
        ctx, #name ".Tensor_out", self, other, out, [](auto zero) { \
          using T = decltype(zero);                                 \
          return [](T x, T y) { return expr; };                     \
        });                                                         \
  }                                                                 \
  Tensor& name##_scalar_out(KernelRuntimeContext& ctx,              \
                            const Tensor& self,                     \
                            const Scalar& other,                    \
                            Tensor& out) {                          \
    return binary_scalar_out<ResultKind::kBool>(                    \
        ctx, #name ".Scalar_out", self, other, out, [](auto zero) { \
          using T = decltype(zero);                                 \
          return [](T x, T y) { return expr; };                     \
        });                                                         \
  }

ET_COMPARE_KERNELS(eq, x == y)
ET_COMPARE_KERNELS(ne, x != y)
ET_COMPARE_KERNELS(gt, x > y)
ET_COMPARE_KERNELS(ge, x >= y)
ET_COMPARE_KERNELS(lt, x < y)
ET_COMPARE_KERNELS(le, x <= y)
#undef ET_COMPARE_KERNELS

#define ET_LOGICAL_KERNEL(name, expr)                        \
  Tensor& name##_out(KernelRuntimeContext& ctx,              \
                     const Tensor& self,                     \
                     const Tensor& other,                    \
                     Tensor& out) {                          \
    return binary_out<ResultKind::kBool>(                    \
        ctx, #name ".out", self, other, out, [](auto zero) { \
          using T = decltype(zero);                          \
          return [](T x, T y) { return expr; };              \
        });                                                  \
  }

ET_LOGICAL_KERNEL(logical_and, x != T(0) && y != T(0))
ET_LOGICAL_KERNEL(logical_or, x != T(0) || y != T(0))
ET_LOGICAL_KERNEL(logical_xor, (x != T(0)) != (y != T(0)))
#undef ET_LOGICAL_KERNEL

Tensor& logical_not_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        Tensor& out) {
  return unary_out<ResultKind::kBool>(
      ctx, "logical_not.out", self, out, [](auto zero) {
        using T = decltype(zero);
        return [](T x) { return x == T(0); };
      });
}

} // namespace native
} // namespace executor
} // namespace torch
