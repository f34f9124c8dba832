// convolution: direct 1-d/2-d convolution (and transposed convolution)
// with groups, stride, padding and dilation, accumulated in float (double
// for double inputs).

#include <cinttypes>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

namespace {

template <typename T>
void conv2d(const T* in,
            const T* w,
            const T* bias,
            T* out,
            int64_t batch,
            int64_t in_c,
            int64_t out_c,
            int64_t groups,
            const Window2d& g) {
  using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
  const int64_t in_per_group = in_c / groups;
  const int64_t out_per_group = out_c / groups;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t oc = 0; oc < out_c; ++oc) {
      const int64_t group = oc / out_per_group;
      const T* wo = w + oc * in_per_group * kh * kw;
      T* o = out + (n * out_c + oc) * g.out[0] * g.out[1];
      for (int64_t oy = 0; oy < g.out[0]; ++oy) {
        for (int64_t ox = 0; ox < g.out[1]; ++ox) {
          C acc = bias != nullptr ? static_cast<C>(bias[oc]) : C(0);
          for (int64_t ic = 0; ic < in_per_group; ++ic) {
            const T* plane =
                in + (n * in_c + group * in_per_group + ic) * g.in[0] * g.in[1];
            const T* wk = wo + ic * kh * kw;
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy =
                  oy * g.stride[0] - g.pad[0] + ky * g.dilation[0];
              if (iy < 0 || iy >= g.in[0]) {
                continue;
              }
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ix =
                    ox * g.stride[1] - g.pad[1] + kx * g.dilation[1];
                if (ix >= 0 && ix < g.in[1]) {
                  acc += static_cast<C>(plane[iy * g.in[1] + ix]) *
                         static_cast<C>(wk[ky * kw + kx]);
                }
              }
            }
          }
          o[oy * g.out[1] + ox] = static_cast<T>(acc);
        }
      }
    }
  }
}

// Transposed convolution: each input element scatters weight * value into
// the output window it maps to. Weight is [in_c, out_c / groups, kh, kw].
template <typename T>
void conv_transpose2d(const T* in,
                      const T* w,
                      const T* bias,
                      T* out,
                      int64_t batch,
                      int64_t in_c,
                      int64_t out_c,
                      int64_t groups,
                      const Window2d& g) {
  using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
  const int64_t in_per_group = in_c / groups;
  const int64_t out_per_group = out_c / groups;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t out_plane = g.out[0] * g.out[1];
  // Accumulate in C directly in a float output; 16-bit outputs round once
  // per contribution, which matches their storage precision.
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t oc = 0; oc < out_c; ++oc) {
      T* o = out + (n * out_c + oc) * out_plane;
      for (int64_t i = 0; i < out_plane; ++i) {
        o[i] = bias != nullptr ? bias[oc] : static_cast<T>(0);
      }
    }
    for (int64_t ic = 0; ic < in_c; ++ic) {
      const int64_t group = ic / in_per_group;
      const T* plane = in + (n * in_c + ic) * g.in[0] * g.in[1];
      for (int64_t ol = 0; ol < out_per_group; ++ol) {
        const int64_t oc = group * out_per_group + ol;
        const T* wk = w + (ic * out_per_group + ol) * kh * kw;
        T* o = out + (n * out_c + oc) * out_plane;
        for (int64_t iy = 0; iy < g.in[0]; ++iy) {
          for (int64_t ix = 0; ix < g.in[1]; ++ix) {
            const C v = static_cast<C>(plane[iy * g.in[1] + ix]);
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t oy =
                  iy * g.stride[0] - g.pad[0] + ky * g.dilation[0];
              if (oy < 0 || oy >= g.out[0]) {
                continue;
              }
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t ox =
                    ix * g.stride[1] - g.pad[1] + kx * g.dilation[1];
                if (ox >= 0 && ox < g.out[1]) {
                  T& target = o[oy * g.out[1] + ox];
                  target = static_cast<T>(static_cast<C>(target) +
                                          v * static_cast<C>(wk[ky * kw + kx]));
                }
              }
            }
          }
        }
      }
    }
  }
}

} // namespace

Tensor& convolution_out(KernelRuntimeContext& ctx,
                        const Tensor& input,
                        const Tensor& weight,
                        const std::optional<Tensor>& bias,
                        IntArrayRef stride,
                        IntArrayRef padding,
                        IntArrayRef dilation,
                        bool transposed,
                        IntArrayRef output_padding,
                        int64_t groups,
                        Tensor& out) {
  const char* op = "convolution.out";
  if (!check_rank(ctx, op, "input", input, {3, 4}) ||
      !check_rank(ctx, op, "weight", weight, {input.dim()}) ||
      !check_same_dtype(ctx, op, "weight", weight, input) ||
      !check_same_dtype(ctx, op, "out", out, input) ||
      !check_default_dim_order(ctx, op, {&input, &weight, &out})) {
    return out;
  }
  const bool is_1d = input.dim() == 3;
  const int64_t in_c = input.size(1);
  // Weight is [out_c, in_c / groups, ...], or [in_c, out_c / groups, ...]
  // when transposed.
  const int64_t out_c =
      transposed ? weight.size(1) * (groups > 0 ? groups : 1) : weight.size(0);
  const int64_t weight_in_c =
      transposed ? weight.size(0) : weight.size(1) * groups;
  if (groups <= 0 || in_c % groups != 0 || out_c % groups != 0 ||
      weight_in_c != in_c) {
    fail_arg(ctx,
             op,
             "weight of shape [%zd, %zd, ...] does not fit %" PRId64
             " input channels in %" PRId64 " groups",
             static_cast<ssize_t>(out_c),
             static_cast<ssize_t>(weight.size(1)),
             in_c,
             groups);
    return out;
  }
  if (bias.has_value() && (bias->numel() != out_c ||
                           !check_same_dtype(ctx, op, "bias", *bias, input))) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "bias must have %" PRId64 " elements", out_c);
    }
    return out;
  }
  Window2d g;
  for (int i = 0; i < 2; ++i) {
    // For 1-d the H "dim" is a unit dim with trivial parameters.
    const bool unit = is_1d && i == 0;
    const size_t p = is_1d ? 0 : static_cast<size_t>(i);
    g.kernel[i] = unit ? 1 : weight.size(2 + p);
    g.in[i] = unit ? 1 : input.size(2 + p);
    g.stride[i] = unit ? 1 : param_at(stride, p, 1);
    g.pad[i] = unit ? 0 : param_at(padding, p, 0);
    g.dilation[i] = unit ? 1 : param_at(dilation, p, 1);
    const int64_t extra =
        unit || !transposed ? 0 : param_at(output_padding, p, 0);
    if (g.stride[i] <= 0 || g.pad[i] < 0 || g.dilation[i] <= 0 || extra < 0) {
      fail_arg(ctx, op, "stride and dilation must be positive, padding >= 0");
      return out;
    }
    g.out[i] = transposed ? (g.in[i] - 1) * g.stride[i] - 2 * g.pad[i] +
                                g.dilation[i] * (g.kernel[i] - 1) + extra + 1
                          : window_output_size(g.in[i],
                                               g.kernel[i],
                                               g.stride[i],
                                               g.pad[i],
                                               g.dilation[i],
                                               false);
  }
  Shape shape;
  shape.push_back(input.size(0));
  shape.push_back(out_c);
  if (!is_1d) {
    shape.push_back(g.out[0]);
  }
  shape.push_back(g.out[1]);
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const auto run = transposed ? conv_transpose2d<T> : conv2d<T>;
    run(input.const_data_ptr<T>(),
        weight.const_data_ptr<T>(),
        bias.has_value() ? bias->const_data_ptr<T>() : nullptr,
        out.mutable_data_ptr<T>(),
        input.size(0),
        in_c,
        out_c,
        groups,
        g);
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
