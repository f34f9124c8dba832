// convolution and convolution_backward: direct 1-d/2-d convolution (and
// transposed convolution; forward in any dim order) with groups, stride,
// padding and dilation, accumulated in float (double for double inputs; integer
// dtypes accumulate in their own type and wrap like eager).

#include <algorithm>
#include <cinttypes>
#include <limits>
#include <tuple>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Element strides of an [N, C, H, W] tensor, or of an [N, C, W] one with a
// unit H dim, in whatever dim order it has (exporters keep channels-last).
struct ConvStrides {
  int64_t n, c, y, x;
};

ConvStrides conv_strides(const Tensor& t) {
  const auto s = t.strides();
  return t.dim() == 4 ? ConvStrides{s[0], s[1], s[2], s[3]}
                      : ConvStrides{s[0], s[1], 0, s[2]};
}

template <typename T>
void conv2d(const T* in,
            const ConvStrides& is,
            const T* w,
            const ConvStrides& ws,
            const T* bias,
            T* out,
            const ConvStrides& os,
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
      const T* wo = w + oc * ws.n;
      T* o = out + n * os.n + oc * os.c;
      for (int64_t oy = 0; oy < g.out[0]; ++oy) {
        for (int64_t ox = 0; ox < g.out[1]; ++ox) {
          C acc = bias != nullptr ? static_cast<C>(bias[oc]) : C(0);
          for (int64_t ic = 0; ic < in_per_group; ++ic) {
            const T* plane = in + n * is.n + (group * in_per_group + ic) * is.c;
            const T* wk = wo + ic * ws.c;
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
                  acc += static_cast<C>(plane[iy * is.y + ix * is.x]) *
                         static_cast<C>(wk[ky * ws.y + kx * ws.x]);
                }
              }
            }
          }
          o[oy * os.y + ox * os.x] = static_cast<T>(acc);
        }
      }
    }
  }
}

// Transposed convolution: each input element scatters weight * value into
// the output window it maps to. Weight is [in_c, out_c / groups, kh, kw].
template <typename T>
void conv_transpose2d(const T* in,
                      const ConvStrides& is,
                      const T* w,
                      const ConvStrides& ws,
                      const T* bias,
                      T* out,
                      const ConvStrides& os,
                      int64_t batch,
                      int64_t in_c,
                      int64_t out_c,
                      int64_t groups,
                      const Window2d& g) {
  using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
  const int64_t in_per_group = in_c / groups;
  const int64_t out_per_group = out_c / groups;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  // Accumulate in C directly in a float output; 16-bit outputs round once
  // per contribution, which matches their storage precision.
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t oc = 0; oc < out_c; ++oc) {
      T* o = out + n * os.n + oc * os.c;
      for (int64_t oy = 0; oy < g.out[0]; ++oy) {
        for (int64_t ox = 0; ox < g.out[1]; ++ox) {
          o[oy * os.y + ox * os.x] =
              bias != nullptr ? bias[oc] : static_cast<T>(0);
        }
      }
    }
    for (int64_t ic = 0; ic < in_c; ++ic) {
      const int64_t group = ic / in_per_group;
      const T* plane = in + n * is.n + ic * is.c;
      for (int64_t ol = 0; ol < out_per_group; ++ol) {
        const int64_t oc = group * out_per_group + ol;
        const T* wk = w + ic * ws.n + ol * ws.c;
        T* o = out + n * os.n + oc * os.c;
        for (int64_t iy = 0; iy < g.in[0]; ++iy) {
          for (int64_t ix = 0; ix < g.in[1]; ++ix) {
            const C v = static_cast<C>(plane[iy * is.y + ix * is.x]);
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
                  T& target = o[oy * os.y + ox * os.x];
                  target = static_cast<T>(
                      static_cast<C>(target) +
                      v * static_cast<C>(wk[ky * ws.y + kx * ws.x]));
                }
              }
            }
          }
        }
      }
    }
  }
}

// Checks a 1-d or 2-d convolution's input, weight and window parameters and
// computes its geometry (`g`) and number of output channels (`out_c`).
bool conv_geometry(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& input,
                   const Tensor& weight,
                   IntArrayRef stride,
                   IntArrayRef padding,
                   IntArrayRef dilation,
                   bool transposed,
                   IntArrayRef output_padding,
                   int64_t groups,
                   Window2d* g,
                   int64_t* out_c) {
  if (!check_rank(ctx, op, "input", input, {3, 4}) ||
      !check_rank(ctx, op, "weight", weight, {input.dim()}) ||
      !check_same_dtype(ctx, op, "weight", weight, input)) {
    return false;
  }
  const bool is_1d = input.dim() == 3;
  const int64_t in_c = input.size(1);
  // Past int32 no size or count fits a tensor, and the arithmetic below
  // (a channel count times groups, the window sizes) could overflow.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (groups <= 0 || groups > kMax) {
    fail_arg(ctx,
             op,
             "groups must be positive, at most %" PRId64 ", not %" PRId64,
             kMax,
             groups);
    return false;
  }
  // Weight is [out_c, in_c / groups, ...], or [in_c, out_c / groups, ...]
  // when transposed.
  *out_c = transposed ? weight.size(1) * groups : weight.size(0);
  const int64_t weight_in_c =
      transposed ? weight.size(0) : weight.size(1) * groups;
  if (in_c % groups != 0 || *out_c % groups != 0 || weight_in_c != in_c) {
    fail_arg(ctx,
             op,
             "weight of shape [%zd, %zd, ...] does not fit %" PRId64
             " input channels in %" PRId64 " groups",
             static_cast<ssize_t>(weight.size(0)),
             static_cast<ssize_t>(weight.size(1)),
             in_c,
             groups);
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    // For 1-d the H "dim" is a unit dim with trivial parameters.
    const bool unit = is_1d && i == 0;
    const size_t p = is_1d ? 0 : static_cast<size_t>(i);
    g->kernel[i] = unit ? 1 : weight.size(2 + p);
    g->in[i] = unit ? 1 : input.size(2 + p);
    g->stride[i] = unit ? 1 : param_at(stride, p, 1);
    g->pad[i] = unit ? 0 : param_at(padding, p, 0);
    g->dilation[i] = unit ? 1 : param_at(dilation, p, 1);
    const int64_t extra =
        unit || !transposed ? 0 : param_at(output_padding, p, 0);
    if (g->stride[i] <= 0 || g->pad[i] < 0 || g->dilation[i] <= 0 ||
        extra < 0 || g->stride[i] > kMax || g->pad[i] > kMax ||
        g->dilation[i] > kMax || extra > kMax) {
      fail_arg(ctx,
               op,
               "stride and dilation must be positive, padding >= 0, each "
               "at most %" PRId64,
               kMax);
      return false;
    }
    g->out[i] = transposed ? (g->in[i] - 1) * g->stride[i] - 2 * g->pad[i] +
                                 g->dilation[i] * (g->kernel[i] - 1) + extra + 1
                           : window_output_size(g->in[i],
                                                g->kernel[i],
                                                g->stride[i],
                                                g->pad[i],
                                                g->dilation[i],
                                                false);
  }
  return true;
}

// The shape a convolution with geometry `g` produces.
Shape conv_output_shape(const Tensor& input, int64_t out_c, const Window2d& g) {
  Shape shape;
  shape.push_back(input.size(0));
  shape.push_back(out_c);
  if (input.dim() == 4) {
    shape.push_back(g.out[0]);
  }
  shape.push_back(g.out[1]);
  return shape;
}

// Calls fn(input_offset, weight_offset, output_offset) for every product
// input * weight a convolution adds into an output element (offsets in
// elements of contiguous tensors), for plain and transposed convolution.
template <typename Fn>
void for_each_tap(const Window2d& g,
                  int64_t batch,
                  int64_t in_c,
                  int64_t out_c,
                  int64_t groups,
                  bool transposed,
                  Fn fn) {
  const int64_t in_per_group = in_c / groups;
  const int64_t out_per_group = out_c / groups;
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t in_plane = g.in[0] * g.in[1];
  const int64_t out_plane = g.out[0] * g.out[1];
  // A plain convolution reads input row iy = oy * stride - pad + ky * dil
  // for output row oy; a transposed one writes output row oy from input row
  // iy by the same relation with the roles swapped.
  const int64_t* near = transposed ? g.in : g.out; // the strided side
  const int64_t* far = transposed ? g.out : g.in;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t ic = 0; ic < in_c; ++ic) {
      const int64_t group = ic / in_per_group;
      for (int64_t ol = 0; ol < out_per_group; ++ol) {
        const int64_t oc = group * out_per_group + ol;
        const int64_t w_base =
            transposed ? (ic * out_per_group + ol) * kh * kw
                       : (oc * in_per_group + ic % in_per_group) * kh * kw;
        const int64_t i_base = (n * in_c + ic) * in_plane;
        const int64_t o_base = (n * out_c + oc) * out_plane;
        for (int64_t a = 0; a < near[0]; ++a) {
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t b = a * g.stride[0] - g.pad[0] + ky * g.dilation[0];
            if (b < 0 || b >= far[0]) {
              continue;
            }
            for (int64_t c = 0; c < near[1]; ++c) {
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t d =
                    c * g.stride[1] - g.pad[1] + kx * g.dilation[1];
                if (d < 0 || d >= far[1]) {
                  continue;
                }
                const int64_t near_at = a * near[1] + c;
                const int64_t far_at = b * far[1] + d;
                fn(i_base + (transposed ? near_at : far_at),
                   w_base + ky * kw + kx,
                   o_base + (transposed ? far_at : near_at));
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
  Window2d g;
  int64_t out_c = 0;
  if (!conv_geometry(ctx,
                     op,
                     input,
                     weight,
                     stride,
                     padding,
                     dilation,
                     transposed,
                     output_padding,
                     groups,
                     &g,
                     &out_c) ||
      !check_same_dtype(ctx, op, "out", out, input)) {
    return out;
  }
  const int64_t in_c = input.size(1);
  if (bias.has_value() && (bias->numel() != out_c ||
                           !check_same_dtype(ctx, op, "bias", *bias, input))) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "bias must have %" PRId64 " elements", out_c);
    }
    return out;
  }
  if (!resize_out(
          ctx, op, "out", out, conv_output_shape(input, out_c, g).ref())) {
    return out;
  }
  ET_SWITCH_REALHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const auto run = transposed ? conv_transpose2d<T> : conv2d<T>;
    run(input.const_data_ptr<T>(),
        conv_strides(input),
        weight.const_data_ptr<T>(),
        conv_strides(weight),
        bias.has_value() ? bias->const_data_ptr<T>() : nullptr,
        out.mutable_data_ptr<T>(),
        conv_strides(out),
        input.size(0),
        in_c,
        out_c,
        groups,
        g);
  });
  return out;
}

// Gradients of convolution: grad_input[i] += grad[o] * weight[w],
// grad_weight[w] += grad[o] * input[i] over every tap (i, w, o) of the
// forward pass, and grad_bias sums grad per output channel. Outputs whose
// output_mask entry is false are left untouched.
std::tuple<Tensor&, Tensor&, Tensor&> convolution_backward_out(
    KernelRuntimeContext& ctx,
    const Tensor& grad_output,
    const Tensor& input,
    const Tensor& weight,
    std::optional<IntArrayRef> bias_sizes,
    IntArrayRef stride,
    IntArrayRef padding,
    IntArrayRef dilation,
    bool transposed,
    IntArrayRef output_padding,
    int64_t groups,
    ArrayRef<bool> output_mask,
    Tensor& grad_input,
    Tensor& grad_weight,
    Tensor& grad_bias) {
  const char* op = "convolution_backward.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(
      grad_input, grad_weight, grad_bias);
  Window2d g;
  int64_t out_c = 0;
  if (output_mask.size() != 3) {
    fail_arg(ctx, op, "output_mask must have 3 entries");
    return result;
  }
  if (!conv_geometry(ctx,
                     op,
                     input,
                     weight,
                     stride,
                     padding,
                     dilation,
                     transposed,
                     output_padding,
                     groups,
                     &g,
                     &out_c) ||
      !check_same_dtype(ctx, op, "grad_output", grad_output, input) ||
      // for_each_tap's offsets are those of contiguous tensors.
      !check_default_dim_order(ctx, op, {&grad_output, &input, &weight})) {
    return result;
  }
  if (conv_output_shape(input, out_c, g).ref() != grad_output.sizes()) {
    char got[64];
    fail_arg(ctx,
             op,
             "grad_output has shape %s, not the convolution's output shape",
             format_sizes(grad_output.sizes(), got, sizeof(got)));
    return result;
  }
  const Tensor* outs[] = {&grad_input, &grad_weight, &grad_bias};
  for (int k = 0; k < 3; ++k) {
    if (!output_mask[k]) {
      continue;
    }
    const SizesType bias_size = static_cast<SizesType>(out_c);
    const ArrayRef<SizesType> shape = k == 0 ? input.sizes()
                                      : k == 1
                                          ? weight.sizes()
                                          : ArrayRef<SizesType>(&bias_size, 1);
    if (!check_same_dtype(ctx, op, "out", *outs[k], input) ||
        !resize_out(ctx, op, "out", *outs[k], shape) ||
        !check_default_dim_order(ctx, op, {outs[k]})) {
      return result;
    }
  }
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    // Sums run in C: 16-bit outputs get C-typed sums in temp memory, then
    // round once.
    C* sums[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k) {
      if (!output_mask[k]) {
        continue;
      }
      const size_t count = static_cast<size_t>(outs[k]->numel());
      if (std::is_same<T, C>::value) {
        sums[k] = reinterpret_cast<C*>(outs[k]->mutable_data_ptr<T>());
      } else {
        auto temp = ctx.allocate_temp(count * sizeof(C) + 1, alignof(C));
        if (!temp.ok()) {
          fail_arg(ctx, op, "needs temp memory for %zu float sums", count);
          return;
        }
        sums[k] = static_cast<C*>(*temp);
      }
      std::fill(sums[k], sums[k] + count, C(0));
    }
    const T* grad = grad_output.const_data_ptr<T>();
    const T* in = input.const_data_ptr<T>();
    const T* w = weight.const_data_ptr<T>();
    C* gi = sums[0];
    C* gw = sums[1];
    if (gi != nullptr || gw != nullptr) {
      for_each_tap(g,
                   input.size(0),
                   input.size(1),
                   out_c,
                   groups,
                   transposed,
                   [&](int64_t i, int64_t k, int64_t o) {
                     const C go = static_cast<C>(grad[o]);
                     if (gi != nullptr) {
                       gi[i] += go * static_cast<C>(w[k]);
                     }
                     if (gw != nullptr) {
                       gw[k] += go * static_cast<C>(in[i]);
                     }
                   });
    }
    if (!std::is_same<T, C>::value) {
      for (int k = 0; k < 2; ++k) {
        if (sums[k] != nullptr) {
          T* data = outs[k]->mutable_data_ptr<T>();
          for (ssize_t i = 0; i < outs[k]->numel(); ++i) {
            data[i] = static_cast<T>(sums[k][i]);
          }
        }
      }
    }
    if (output_mask[2]) {
      T* gb = grad_bias.mutable_data_ptr<T>();
      const int64_t plane = g.out[0] * g.out[1];
      for (int64_t oc = 0; oc < out_c; ++oc) {
        C sum = 0;
        for (int64_t n = 0; n < input.size(0); ++n) {
          const T* src = grad + (n * out_c + oc) * plane;
          for (int64_t i = 0; i < plane; ++i) {
            sum += static_cast<C>(src[i]);
          }
        }
        gb[oc] = static_cast<T>(sum);
      }
    }
  });
  (void)bias_sizes; // grad_bias's shape follows from weight
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
