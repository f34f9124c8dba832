// add: self + alpha * other.

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace {

auto add_maker(const Scalar& alpha) {
  return [&alpha](auto zero) {
    using T = decltype(zero);
    const T a = alpha.to<T>();
    return [a](T x, T y) { return static_cast<T>(x + a * y); };
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

} // namespace native
} // namespace executor
} // namespace torch
