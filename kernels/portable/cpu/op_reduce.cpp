// Reductions over dims: sum, mean, amax, amin.

#include <cmath>
#include <limits>

#include <executorch/kernels/portable/util/reduce.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Accumulator for sums: double for floating inputs, int64 otherwise (as
// PyTorch sums integers into int64).
template <typename T>
using sum_acc_t =
    std::conditional_t<std::is_integral<T>::value, int64_t, double>;

// Type the comparisons of amax/amin run in.
template <typename T>
using cmp_t = std::conditional_t<internal::is_16bit_float<T>, float, T>;

bool check_dtype_arg(KernelRuntimeContext& ctx,
                     const char* op,
                     std::optional<ScalarType> dtype,
                     const Tensor& out) {
  if (dtype.has_value() && *dtype != out.scalar_type()) {
    fail_arg(ctx,
             op,
             "dtype %s does not match out's dtype %s",
             ::executorch::runtime::toString(*dtype),
             ::executorch::runtime::toString(out.scalar_type()));
    return false;
  }
  return true;
}

// Shared by sum and mean: mean divides the sum by the reduced count.
Tensor& sum_or_mean(KernelRuntimeContext& ctx,
                    const char* op,
                    const Tensor& self,
                    std::optional<IntArrayRef> dim,
                    bool keepdim,
                    std::optional<ScalarType> dtype,
                    Tensor& out,
                    bool mean) {
  ReducePlan plan;
  if (!check_dtype_arg(ctx, op, dtype, out) ||
      !prepare_reduction(ctx, op, self, dim, keepdim, out, &plan)) {
    return out;
  }
  const double count = static_cast<double>(plan.reduced_count);
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using ACC = sum_acc_t<T>;
    auto step = [](ACC acc, T x) { return acc + internal::convert<ACC>(x); };
    if (mean) {
      reduce_into<T>(
          self,
          plan,
          out,
          0.0,
          [](double acc, T x) { return acc + internal::convert<double>(x); },
          [count](double acc) { return acc / count; });
    } else {
      reduce_into<T>(
          self, plan, out, ACC(0), step, [](ACC acc) { return acc; });
    }
  });
  return out;
}

template <bool kMax>
Tensor& extreme_out(KernelRuntimeContext& ctx,
                    const char* op,
                    const Tensor& self,
                    IntArrayRef dim,
                    bool keepdim,
                    Tensor& out) {
  ReducePlan plan;
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !prepare_reduction(ctx, op, self, dim, keepdim, out, &plan)) {
    return out;
  }
  if (plan.reduced_count == 0 && plan.out_shape.numel() > 0) {
    fail_arg(ctx, op, "cannot reduce over an empty dim");
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = cmp_t<T>;
    const C init =
        kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    reduce_into<T>(
        self,
        plan,
        out,
        init,
        [](C acc, T value) {
          const C x = internal::convert<C>(value);
          if constexpr (std::is_floating_point<C>::value) {
            if (std::isnan(x) || std::isnan(acc)) {
              return std::isnan(acc) ? acc : x;
            }
          }
          return (kMax ? x > acc : x < acc) ? x : acc;
        },
        [](C acc) { return acc; });
  });
  return out;
}

} // namespace

Tensor& sum_dim_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    std::optional<IntArrayRef> dim,
                    bool keepdim,
                    std::optional<ScalarType> dtype,
                    Tensor& out) {
  return sum_or_mean(ctx,
                     "sum.IntList_out",
                     self,
                     dim,
                     keepdim,
                     dtype,
                     out,
                     /*mean=*/false);
}

Tensor& mean_dim_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     std::optional<IntArrayRef> dim,
                     bool keepdim,
                     std::optional<ScalarType> dtype,
                     Tensor& out) {
  return sum_or_mean(ctx,
                     "mean.out",
                     self,
                     dim,
                     keepdim,
                     dtype,
                     out,
                     /*mean=*/true);
}

Tensor& amax_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 IntArrayRef dim,
                 bool keepdim,
                 Tensor& out) {
  return extreme_out<true>(ctx, "amax.out", self, dim, keepdim, out);
}

Tensor& amin_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 IntArrayRef dim,
                 bool keepdim,
                 Tensor& out) {
  return extreme_out<false>(ctx, "amin.out", self, dim, keepdim, out);
}

Tensor& sum_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                std::optional<ScalarType> dtype,
                Tensor& out) {
  return sum_or_mean(ctx,
                     "sum.out",
                     self,
                     std::nullopt,
                     false,
                     dtype,
                     out,
                     /*mean=*/false);
}

Tensor& mean_dtype_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       std::optional<ScalarType> dtype,
                       Tensor& out) {
  return sum_or_mean(ctx,
                     "mean.dtype_out",
                     self,
                     std::nullopt,
                     false,
                     dtype,
                     out,
                     /*mean=*/true);
}

} // namespace native
} // namespace executor
} // namespace torch
