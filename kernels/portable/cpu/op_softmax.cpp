// _softmax and _log_softmax along one dim, computed stably (the lane's max
// is subtracted before exponentiating).

#include <cmath>

#include <executorch/kernels/portable/util/reduce.h>

namespace torch {
namespace executor {
namespace native {

namespace {

Tensor& softmax_impl(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     int64_t dim,
                     Tensor& out,
                     bool log) {
  int64_t d = 0;
  if (!normalize_dim(ctx, op, dim, self.dim(), &d) ||
      !check_default_dim_order(ctx, op, {&self, &out}) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !resize_like(ctx, op, out, self)) {
    return out;
  }
  if (self.numel() == 0) {
    return out; // nothing to compute, whatever the dtype (as in eager)
  }
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    const T* in = self.const_data_ptr<T>();
    T* result = out.mutable_data_ptr<T>();
    for_each_lane(self, d, [&](int64_t base, int64_t stride, int64_t n) {
      C max = -std::numeric_limits<C>::infinity();
      for (int64_t i = 0; i < n; ++i) {
        const C x = static_cast<C>(in[base + i * stride]);
        max = x > max ? x : max;
      }
      C sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        sum += std::exp(static_cast<C>(in[base + i * stride]) - max);
      }
      const C log_sum = std::log(sum);
      for (int64_t i = 0; i < n; ++i) {
        const C shifted = static_cast<C>(in[base + i * stride]) - max;
        result[base + i * stride] =
            static_cast<T>(log ? shifted - log_sum : std::exp(shifted) / sum);
      }
    });
  });
  return out;
}

} // namespace

Tensor& softmax_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    int64_t dim,
                    bool half_to_float,
                    Tensor& out) {
  if (half_to_float) {
    fail_arg(ctx, "_softmax.out", "half_to_float is not supported");
    return out;
  }
  return softmax_impl(ctx, "_softmax.out", self, dim, out, /*log=*/false);
}

Tensor& log_softmax_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        int64_t dim,
                        bool half_to_float,
                        Tensor& out) {
  if (half_to_float) {
    fail_arg(ctx, "_log_softmax.out", "half_to_float is not supported");
    return out;
  }
  return softmax_impl(ctx, "_log_softmax.out", self, dim, out, /*log=*/true);
}

} // namespace native
} // namespace executor
} // namespace torch
