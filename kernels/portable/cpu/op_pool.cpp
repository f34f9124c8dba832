// max_pool2d_with_indices and avg_pool2d over [N, C, H, W] or [C, H, W].

#include <cmath>
#include <limits>
#include <tuple>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Validates a pooling call and computes its window; resizes `outs` to
// [..., out_h, out_w]. `planes` gets N * C.
bool prepare_pool(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& self,
                  IntArrayRef kernel_size,
                  IntArrayRef stride,
                  IntArrayRef padding,
                  IntArrayRef dilation,
                  bool ceil_mode,
                  std::initializer_list<const Tensor*> outs,
                  Window2d* g,
                  int64_t* planes) {
  if (!check_rank(ctx, op, "self", self, {3, 4}) ||
      !check_default_dim_order(ctx, op, {&self})) {
    return false;
  }
  if (kernel_size.size() == 0) {
    fail_arg(ctx, op, "kernel_size must not be empty");
    return false;
  }
  const int64_t rank = self.dim();
  for (size_t i = 0; i < 2; ++i) {
    g->kernel[i] = param_at(kernel_size, i, 1);
    g->stride[i] = param_at(stride, i, g->kernel[i]);
    g->pad[i] = param_at(padding, i, 0);
    g->dilation[i] = param_at(dilation, i, 1);
    g->in[i] = self.size(rank - 2 + i);
    if (g->kernel[i] <= 0 || g->stride[i] <= 0 || g->dilation[i] <= 0 ||
        g->pad[i] < 0 || g->pad[i] * 2 > g->kernel[i]) {
      fail_arg(ctx, op, "invalid kernel_size, stride, padding or dilation");
      return false;
    }
    g->out[i] = window_output_size(g->in[i],
                                   g->kernel[i],
                                   g->stride[i],
                                   g->pad[i],
                                   g->dilation[i],
                                   ceil_mode);
  }
  Shape shape;
  for (int64_t d = 0; d < rank - 2; ++d) {
    shape.push_back(self.size(d));
  }
  shape.push_back(g->out[0]);
  shape.push_back(g->out[1]);
  *planes = rank == 4 ? self.size(0) * self.size(1) : self.size(0);
  for (const Tensor* out : outs) {
    if (!resize_out(ctx, op, "out", *out, shape.ref()) ||
        !check_default_dim_order(ctx, op, {out})) {
      return false;
    }
  }
  return true;
}

} // namespace

std::tuple<Tensor&, Tensor&> max_pool2d_with_indices_out(
    KernelRuntimeContext& ctx,
    const Tensor& self,
    IntArrayRef kernel_size,
    IntArrayRef stride,
    IntArrayRef padding,
    IntArrayRef dilation,
    bool ceil_mode,
    Tensor& out,
    Tensor& indices) {
  const char* op = "max_pool2d_with_indices.out";
  std::tuple<Tensor&, Tensor&> result(out, indices);
  Window2d g;
  int64_t planes = 0;
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !check_dtype(ctx, op, "indices", indices, ScalarType::Long) ||
      !prepare_pool(ctx,
                    op,
                    self,
                    kernel_size,
                    stride,
                    padding,
                    dilation,
                    ceil_mode,
                    {&out, &indices},
                    &g,
                    &planes)) {
    return result;
  }
  ET_SWITCH_REALHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    const T* in = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    int64_t* idx = indices.mutable_data_ptr<int64_t>();
    const int64_t in_plane = g.in[0] * g.in[1];
    const int64_t out_plane = g.out[0] * g.out[1];
    for (int64_t p = 0; p < planes; ++p) {
      const T* src = in + p * in_plane;
      for (int64_t oy = 0; oy < g.out[0]; ++oy) {
        for (int64_t ox = 0; ox < g.out[1]; ++ox) {
          C best = std::numeric_limits<C>::lowest();
          int64_t best_index = -1;
          for (int64_t ky = 0; ky < g.kernel[0]; ++ky) {
            const int64_t iy = oy * g.stride[0] - g.pad[0] + ky * g.dilation[0];
            if (iy < 0 || iy >= g.in[0]) {
              continue;
            }
            for (int64_t kx = 0; kx < g.kernel[1]; ++kx) {
              const int64_t ix =
                  ox * g.stride[1] - g.pad[1] + kx * g.dilation[1];
              if (ix < 0 || ix >= g.in[1]) {
                continue;
              }
              const C v = static_cast<C>(src[iy * g.in[1] + ix]);
              bool nan = false;
              if constexpr (std::is_floating_point<C>::value) {
                nan = std::isnan(v);
              }
              if (best_index < 0 || v > best || nan) {
                best = v;
                best_index = iy * g.in[1] + ix;
                if (nan) {
                  ky = g.kernel[0];
                  break;
                }
              }
            }
          }
          o[p * out_plane + oy * g.out[1] + ox] = static_cast<T>(best);
          idx[p * out_plane + oy * g.out[1] + ox] = best_index;
        }
      }
    }
  });
  return result;
}

Tensor& avg_pool2d_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       IntArrayRef kernel_size,
                       IntArrayRef stride,
                       IntArrayRef padding,
                       bool ceil_mode,
                       bool count_include_pad,
                       std::optional<int64_t> divisor_override,
                       Tensor& out) {
  const char* op = "avg_pool2d.out";
  Window2d g;
  int64_t planes = 0;
  const int64_t no_dilation[] = {1};
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !prepare_pool(ctx,
                    op,
                    self,
                    kernel_size,
                    stride,
                    padding,
                    IntArrayRef(no_dilation),
                    ceil_mode,
                    {&out},
                    &g,
                    &planes)) {
    return out;
  }
  if (divisor_override.has_value() && *divisor_override == 0) {
    fail_arg(ctx, op, "divisor_override must be non-zero");
    return out;
  }
  ET_SWITCH_REALHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<
        std::is_integral<T>::value,
        int64_t,
        std::conditional_t<internal::is_16bit_float<T>, float, T>>;
    const T* in = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    const int64_t in_plane = g.in[0] * g.in[1];
    const int64_t out_plane = g.out[0] * g.out[1];
    for (int64_t p = 0; p < planes; ++p) {
      const T* src = in + p * in_plane;
      for (int64_t oy = 0; oy < g.out[0]; ++oy) {
        for (int64_t ox = 0; ox < g.out[1]; ++ox) {
          // Window bounds within the padded input, then within the input.
          int64_t y0 = oy * g.stride[0] - g.pad[0];
          int64_t x0 = ox * g.stride[1] - g.pad[1];
          int64_t y1 = std::min(y0 + g.kernel[0], g.in[0] + g.pad[0]);
          int64_t x1 = std::min(x0 + g.kernel[1], g.in[1] + g.pad[1]);
          const int64_t padded_count = (y1 - y0) * (x1 - x0);
          y0 = std::max<int64_t>(y0, 0);
          x0 = std::max<int64_t>(x0, 0);
          y1 = std::min(y1, g.in[0]);
          x1 = std::min(x1, g.in[1]);
          C sum = 0;
          for (int64_t iy = y0; iy < y1; ++iy) {
            for (int64_t ix = x0; ix < x1; ++ix) {
              sum += static_cast<C>(src[iy * g.in[1] + ix]);
            }
          }
          const int64_t divisor =
              divisor_override.has_value()
                  ? *divisor_override
                  : (count_include_pad ? padded_count : (y1 - y0) * (x1 - x0));
          o[p * out_plane + oy * g.out[1] + ox] =
              divisor == 0 ? T(0)
                           : static_cast<T>(sum / static_cast<C>(divisor));
        }
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
