// sub, mul, div: tensor-tensor and tensor-scalar forms share one element
// functor each.

#include <cmath>

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace {

auto sub_maker(const Scalar& alpha) {
  return [&alpha](auto zero) {
    using T = decltype(zero);
    const T a = alpha.to<T>();
    return [a](T x, T y) { return static_cast<T>(x - a * y); };
  };
}

auto mul_maker() {
  return [](auto zero) {
    using T = decltype(zero);
    return [](T x, T y) { return static_cast<T>(x * y); };
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
        return [a](T x, T y) { return static_cast<T>(y - a * x); };
      });
}

} // namespace native
} // namespace executor
} // namespace torch
