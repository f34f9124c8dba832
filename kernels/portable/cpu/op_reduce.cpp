// Reductions over dims and along them: sum, mean, prod, amax/amin,
// max/min (over all or a dim, with indices), argmax/argmin, any/all,
// var/std/var_mean (Welford) and cumsum.

#include <cmath>
#include <limits>
#include <tuple>

#include <NativeFunctions.h> // mean_dim_out
#include <executorch/kernels/portable/util/reduce.h>
#include <executorch/kernels/portable/util/wrapping.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Accumulator for sums: double for floating inputs, int64 otherwise (as
// PyTorch sums integers into int64, wrapping around on overflow).
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
    auto step = [](ACC acc, T x) {
      return internal::wrapping_add(acc, internal::convert<ACC>(x));
    };
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

namespace {

template <typename T>
using wide_t = std::conditional_t<internal::is_16bit_float<T>, float, T>;

template <typename C>
bool nan_value(C x) {
  if constexpr (std::is_floating_point<C>::value) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// Running best value and its position among the reduced elements; the
// first NaN wins, as in PyTorch.
template <typename C>
struct ArgAcc {
  C best;
  int64_t best_index;
  int64_t seen;
};

template <bool kMax, typename T>
ArgAcc<wide_t<T>> arg_step(ArgAcc<wide_t<T>> acc, T value) {
  const wide_t<T> x = internal::convert<wide_t<T>>(value);
  const bool take =
      acc.seen == 0 || (!nan_value(acc.best) &&
                        (nan_value(x) || (kMax ? x > acc.best : x < acc.best)));
  if (take) {
    acc.best = x;
    acc.best_index = acc.seen;
  }
  ++acc.seen;
  return acc;
}

// Reduces `self` over `dims`; writes the winning value (kIndex false) or
// its index (kIndex true) into out.
template <bool kMax, bool kIndex>
void arg_reduce(KernelRuntimeContext& ctx,
                const char* op,
                const Tensor& self,
                std::optional<IntArrayRef> dims,
                bool keepdim,
                const Tensor& out) {
  ReducePlan plan;
  if (!prepare_reduction(ctx, op, self, dims, keepdim, out, &plan)) {
    return;
  }
  if (plan.reduced_count == 0 && plan.out_shape.numel() > 0) {
    fail_arg(ctx, op, "cannot reduce over an empty dim");
    return;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = wide_t<T>;
    reduce_into<T>(self,
                   plan,
                   out,
                   ArgAcc<C>{C(0), 0, 0},
                   arg_step<kMax, T>,
                   [](ArgAcc<C> acc) {
                     if constexpr (kIndex) {
                       return acc.best_index;
                     } else {
                       return acc.best;
                     }
                   });
  });
}

std::optional<IntArrayRef> one_dim(const std::optional<int64_t>& dim) {
  if (!dim.has_value()) {
    return std::nullopt;
  }
  return IntArrayRef(&*dim, 1);
}

template <bool kMax>
std::tuple<Tensor&, Tensor&> extreme_dim(KernelRuntimeContext& ctx,
                                         const char* op,
                                         const Tensor& self,
                                         int64_t dim,
                                         bool keepdim,
                                         Tensor& values,
                                         Tensor& indices) {
  std::tuple<Tensor&, Tensor&> result(values, indices);
  if (!check_same_dtype(ctx, op, "values", values, self) ||
      !check_dtype(ctx, op, "indices", indices, ScalarType::Long)) {
    return result;
  }
  arg_reduce<kMax, false>(ctx, op, self, IntArrayRef(&dim, 1), keepdim, values);
  if (ctx.failure_state() == Error::Ok) {
    arg_reduce<kMax, true>(
        ctx, op, self, IntArrayRef(&dim, 1), keepdim, indices);
  }
  return result;
}

// any (kAll false) / all (kAll true) into a bool or uint8 out.
template <bool kAll>
Tensor& any_all(KernelRuntimeContext& ctx,
                const char* op,
                const Tensor& self,
                std::optional<IntArrayRef> dims,
                bool keepdim,
                Tensor& out) {
  ReducePlan plan;
  if (!prepare_reduction(ctx, op, self, dims, keepdim, out, &plan)) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    reduce_into<T>(
        self,
        plan,
        out,
        kAll,
        [](bool acc, T x) {
          const bool nonzero = internal::convert<float>(x) != 0.0f;
          return kAll ? acc && nonzero : acc || nonzero;
        },
        [](bool acc) { return acc; });
  });
  return out;
}

// Welford's running mean and sum of squared deviations.
struct Moments {
  int64_t n;
  double mean;
  double m2;
};

Tensor& var_std(KernelRuntimeContext& ctx,
                const char* op,
                const Tensor& self,
                std::optional<IntArrayRef> dim,
                const std::optional<Scalar>& correction,
                bool keepdim,
                Tensor& out,
                bool take_sqrt) {
  ReducePlan plan;
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !prepare_reduction(ctx, op, self, dim, keepdim, out, &plan)) {
    return out;
  }
  const double c = correction.has_value() ? correction->to<double>() : 1.0;
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    reduce_into<T>(
        self,
        plan,
        out,
        Moments{0, 0.0, 0.0},
        [](Moments m, T value) {
          const double x = internal::convert<double>(value);
          ++m.n;
          const double delta = x - m.mean;
          m.mean += delta / static_cast<double>(m.n);
          m.m2 += delta * (x - m.mean);
          return m;
        },
        [c, take_sqrt](Moments m) {
          const double dof = static_cast<double>(m.n) - c;
          const double v =
              dof > 0 ? m.m2 / dof : std::numeric_limits<double>::quiet_NaN();
          return take_sqrt ? std::sqrt(v) : v;
        });
  });
  return out;
}

Tensor& prod_impl(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& self,
                  std::optional<IntArrayRef> dims,
                  bool keepdim,
                  std::optional<ScalarType> dtype,
                  Tensor& out) {
  ReducePlan plan;
  if ((dtype.has_value() && *dtype != out.scalar_type()) ||
      !prepare_reduction(ctx, op, self, dims, keepdim, out, &plan)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "dtype does not match out's dtype");
    }
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using ACC = std::conditional_t<std::is_integral<T>::value, int64_t, double>;
    reduce_into<T>(
        self,
        plan,
        out,
        ACC(1),
        [](ACC acc, T x) {
          return internal::wrapping_mul(acc, internal::convert<ACC>(x));
        },
        [](ACC acc) { return acc; });
  });
  return out;
}

} // namespace

Tensor& argmax_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   std::optional<int64_t> dim,
                   bool keepdim,
                   Tensor& out) {
  if (check_dtype(ctx, "argmax.out", "out", out, ScalarType::Long)) {
    arg_reduce<true, true>(ctx, "argmax.out", self, one_dim(dim), keepdim, out);
  }
  return out;
}

Tensor& argmin_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   std::optional<int64_t> dim,
                   bool keepdim,
                   Tensor& out) {
  if (check_dtype(ctx, "argmin.out", "out", out, ScalarType::Long)) {
    arg_reduce<false, true>(
        ctx, "argmin.out", self, one_dim(dim), keepdim, out);
  }
  return out;
}

std::tuple<Tensor&, Tensor&> max_dim_max(KernelRuntimeContext& ctx,
                                         const Tensor& self,
                                         int64_t dim,
                                         bool keepdim,
                                         Tensor& max,
                                         Tensor& max_values) {
  return extreme_dim<true>(
      ctx, "max.dim_max", self, dim, keepdim, max, max_values);
}

std::tuple<Tensor&, Tensor&> min_dim_min(KernelRuntimeContext& ctx,
                                         const Tensor& self,
                                         int64_t dim,
                                         bool keepdim,
                                         Tensor& min,
                                         Tensor& min_indices) {
  return extreme_dim<false>(
      ctx, "min.dim_min", self, dim, keepdim, min, min_indices);
}

Tensor& any_all_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    Tensor& out) {
  return any_all<false>(ctx, "any.all_out", self, std::nullopt, false, out);
}

Tensor& any_dims_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     std::optional<IntArrayRef> dim,
                     bool keepdim,
                     Tensor& out) {
  return any_all<false>(ctx, "any.dims_out", self, dim, keepdim, out);
}

Tensor& any_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                int64_t dim,
                bool keepdim,
                Tensor& out) {
  return any_all<false>(
      ctx, "any.out", self, IntArrayRef(&dim, 1), keepdim, out);
}

Tensor& all_all_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    Tensor& out) {
  return any_all<true>(ctx, "all.all_out", self, std::nullopt, false, out);
}

Tensor& all_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                int64_t dim,
                bool keepdim,
                Tensor& out) {
  return any_all<true>(
      ctx, "all.out", self, IntArrayRef(&dim, 1), keepdim, out);
}

Tensor& prod_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 std::optional<ScalarType> dtype,
                 Tensor& out) {
  return prod_impl(ctx, "prod.out", self, std::nullopt, false, dtype, out);
}

Tensor& prod_int_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     int64_t dim,
                     bool keepdim,
                     std::optional<ScalarType> dtype,
                     Tensor& out) {
  return prod_impl(
      ctx, "prod.int_out", self, IntArrayRef(&dim, 1), keepdim, dtype, out);
}

Tensor& var_correction_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           std::optional<IntArrayRef> dim,
                           const std::optional<Scalar>& correction,
                           bool keepdim,
                           Tensor& out) {
  return var_std(ctx,
                 "var.correction_out",
                 self,
                 dim,
                 correction,
                 keepdim,
                 out,
                 /*take_sqrt=*/false);
}

Tensor& std_correction_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           std::optional<IntArrayRef> dim,
                           const std::optional<Scalar>& correction,
                           bool keepdim,
                           Tensor& out) {
  return var_std(ctx,
                 "std.correction_out",
                 self,
                 dim,
                 correction,
                 keepdim,
                 out,
                 /*take_sqrt=*/true);
}

Tensor& cumsum_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   int64_t dim,
                   std::optional<ScalarType> dtype,
                   Tensor& out) {
  const char* op = "cumsum.out";
  int64_t d = 0;
  if ((dtype.has_value() && *dtype != out.scalar_type())) {
    fail_arg(ctx, op, "dtype does not match out's dtype");
    return out;
  }
  if (!normalize_dim(ctx, op, dim, self.dim(), &d) ||
      !check_default_dim_order(ctx, op, {&self, &out}) ||
      !resize_like(ctx, op, out, self)) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    ET_SWITCH_REALHBF16_TYPES(out.scalar_type(), ctx, op, O, [&] {
      using ACC =
          std::conditional_t<std::is_integral<O>::value, int64_t, double>;
      const T* in = self.const_data_ptr<T>();
      O* result = out.mutable_data_ptr<O>();
      for_each_lane(self, d, [&](int64_t base, int64_t stride, int64_t n) {
        ACC acc = 0;
        for (int64_t i = 0; i < n; ++i) {
          acc = internal::wrapping_add(
              acc, internal::convert<ACC>(in[base + i * stride]));
          result[base + i * stride] = internal::convert<O>(acc);
        }
      });
    });
  });
  return out;
}

Tensor& var_out(KernelRuntimeContext& ctx,
                const Tensor& self,
                std::optional<IntArrayRef> dim,
                bool unbiased,
                bool keepdim,
                Tensor& out) {
  return var_std(ctx,
                 "var.out",
                 self,
                 dim,
                 Scalar(int64_t(unbiased ? 1 : 0)),
                 keepdim,
                 out,
                 /*take_sqrt=*/false);
}

std::tuple<Tensor&, Tensor&> var_mean_correction_out(
    KernelRuntimeContext& ctx,
    const Tensor& self,
    std::optional<IntArrayRef> dim,
    const std::optional<Scalar>& correction,
    bool keepdim,
    Tensor& var,
    Tensor& mean) {
  std::tuple<Tensor&, Tensor&> result(var, mean);
  var_std(ctx,
          "var_mean.correction_out",
          self,
          dim,
          correction,
          keepdim,
          var,
          /*take_sqrt=*/false);
  if (ctx.failure_state() == Error::Ok) {
    mean_dim_out(ctx, self, dim, keepdim, std::nullopt, mean);
  }
  return result;
}

// max()/min() of all elements.
Tensor& max_unary_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      Tensor& out) {
  arg_reduce<true, false>(ctx, "max.unary_out", self, std::nullopt, false, out);
  return out;
}

Tensor& min_unary_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      Tensor& out) {
  arg_reduce<false, false>(
      ctx, "min.unary_out", self, std::nullopt, false, out);
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
