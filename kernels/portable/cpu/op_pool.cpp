// Max and average pooling over 1, 2 or 3 trailing spatial dims:
// max_pool{2,3}d_with_indices, avg_pool{1,2,3}d and the gradients of
// avg_pool2d and max_pool2d, on [N, C, ...] or [C, ...] inputs. 1-d and 2-d
// pooling run as 3-d pooling with unit leading window dims. The forward
// kernels take any dim order; the gradients the default one.

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Window geometry along depth, height and width.
struct Window3d {
  int64_t kernel[3];
  int64_t stride[3];
  int64_t pad[3];
  int64_t dilation[3];
  int64_t in[3];
  int64_t out[3];

  int64_t in_volume() const {
    return in[0] * in[1] * in[2];
  }
  int64_t out_volume() const {
    return out[0] * out[1] * out[2];
  }
};

// Validates a pooling call over `spatial` (2 or 3) trailing dims and
// computes its window; resizes `outs` to [..., out spatial sizes].
// `planes` gets the number of [spatial] planes (N * C or C).
bool prepare_pool(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& self,
                  int64_t spatial,
                  IntArrayRef kernel_size,
                  IntArrayRef stride,
                  IntArrayRef padding,
                  IntArrayRef dilation,
                  bool ceil_mode,
                  std::initializer_list<const Tensor*> outs,
                  Window3d* g,
                  int64_t* planes) {
  if (!check_rank(ctx, op, "self", self, {spatial + 1, spatial + 2})) {
    return false;
  }
  if (kernel_size.size() == 0) {
    fail_arg(ctx, op, "kernel_size must not be empty");
    return false;
  }
  const int64_t rank = self.dim();
  const int64_t unit = 3 - spatial; // leading window dims of size 1
  for (int64_t i = 0; i < 3; ++i) {
    const bool is_unit = i < unit;
    const size_t p = static_cast<size_t>(i - unit);
    g->kernel[i] = is_unit ? 1 : param_at(kernel_size, p, 1);
    g->stride[i] = is_unit ? 1 : param_at(stride, p, g->kernel[i]);
    g->pad[i] = is_unit ? 0 : param_at(padding, p, 0);
    g->dilation[i] = is_unit ? 1 : param_at(dilation, p, 1);
    g->in[i] = is_unit ? 1 : self.size(rank - spatial + (i - unit));
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
  for (int64_t d = 0; d < rank - spatial; ++d) {
    shape.push_back(self.size(d));
  }
  for (int64_t i = unit; i < 3; ++i) {
    shape.push_back(g->out[i]);
  }
  *planes = g->in_volume() == 0 ? 0 : self.numel() / g->in_volume();
  for (const Tensor* out : outs) {
    if (!resize_out(ctx, op, "out", *out, shape.ref())) {
      return false;
    }
  }
  return true;
}

// Element strides of a [N, C, spatial...] or [C, spatial...] tensor in any
// dim order (exporters keep channels-last): the offset of plane p (an
// (n, c) pair) and the strides of the window dims (0 for unit ones).
struct PoolStrides {
  int64_t channels;
  int64_t batch_stride;
  int64_t channel_stride;
  int64_t dims[3];

  int64_t plane(int64_t p) const {
    return p / channels * batch_stride + p % channels * channel_stride;
  }
  int64_t at(int64_t z, int64_t y, int64_t x) const {
    return z * dims[0] + y * dims[1] + x * dims[2];
  }
};

PoolStrides pool_strides(const Tensor& t, int64_t spatial) {
  const auto s = t.strides();
  const int64_t lead = t.dim() - spatial; // 1 or 2: [N,] C
  const int64_t unit = 3 - spatial;
  PoolStrides result{t.size(lead - 1), lead == 2 ? s[0] : 0, s[lead - 1], {}};
  for (int64_t i = 0; i < 3; ++i) {
    result.dims[i] = i < unit ? 0 : s[lead + i - unit];
  }
  return result;
}

// Calls fn(plane, out_offset, z0, y0, x0) for every output position, with
// out_offset its element offset in an output laid out as `out` and
// (z0, y0, x0) the window's first input coordinate (may be negative).
template <typename Fn>
void for_each_window(const Window3d& g,
                     int64_t planes,
                     const PoolStrides& out,
                     Fn fn) {
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oz = 0; oz < g.out[0]; ++oz) {
      for (int64_t oy = 0; oy < g.out[1]; ++oy) {
        for (int64_t ox = 0; ox < g.out[2]; ++ox) {
          fn(p,
             out.plane(p) + out.at(oz, oy, ox),
             oz * g.stride[0] - g.pad[0],
             oy * g.stride[1] - g.pad[1],
             ox * g.stride[2] - g.pad[2]);
        }
      }
    }
  }
}

// The type average pooling sums and divides in.
template <typename T>
using AverageType = std::conditional_t<
    std::is_integral<T>::value,
    int64_t,
    std::conditional_t<internal::is_16bit_float<T>, float, T>>;

// Bounds [lo, hi) of the input elements an average-pooling window starting
// at (z0, y0, x0) covers, and the divisor of its sum.
int64_t average_window(const Window3d& g,
                       int64_t z0,
                       int64_t y0,
                       int64_t x0,
                       bool count_include_pad,
                       std::optional<int64_t> divisor_override,
                       int64_t lo[3],
                       int64_t hi[3]) {
  const int64_t start[3] = {z0, y0, x0};
  int64_t padded_count = 1;
  int64_t count = 1;
  for (int i = 0; i < 3; ++i) {
    // Window bounds within the padded input, then within the input.
    hi[i] = std::min(start[i] + g.kernel[i], g.in[i] + g.pad[i]);
    padded_count *= hi[i] - start[i];
    lo[i] = std::max<int64_t>(start[i], 0);
    hi[i] = std::min(hi[i], g.in[i]);
    count *= hi[i] > lo[i] ? hi[i] - lo[i] : 0;
  }
  return divisor_override.has_value()
             ? *divisor_override
             : (count_include_pad ? padded_count : count);
}

// Checks that a pooling gradient `grad` has the shape pooling `self` with
// window `g` produces, then resizes grad_input to self's shape (zeroed).
bool prepare_pool_grad(KernelRuntimeContext& ctx,
                       const char* op,
                       const Tensor& grad,
                       const Tensor& self,
                       const Window3d& g,
                       int64_t spatial,
                       Tensor& grad_input) {
  bool same = grad.dim() == self.dim();
  for (int64_t d = 0; same && d < self.dim(); ++d) {
    const int64_t from_end = self.dim() - d; // 1 = last dim
    const int64_t expected =
        from_end <= spatial ? g.out[3 - from_end] : self.size(d);
    same = grad.size(d) == expected;
  }
  if (!same) {
    char got[64];
    fail_arg(ctx,
             op,
             "grad_output has shape %s; it does not match pooling self",
             format_sizes(grad.sizes(), got, sizeof(got)));
    return false;
  }
  if (!check_same_dtype(ctx, op, "grad_output", grad, self) ||
      !check_same_dtype(ctx, op, "grad_input", grad_input, self) ||
      !check_default_dim_order(ctx, op, {&grad}) ||
      !resize_out(ctx, op, "grad_input", grad_input, self.sizes()) ||
      !check_default_dim_order(ctx, op, {&grad_input})) {
    return false;
  }
  if (grad_input.nbytes() > 0) {
    std::memset(grad_input.mutable_data_ptr(), 0, grad_input.nbytes());
  }
  return true;
}

std::tuple<Tensor&, Tensor&> max_pool(KernelRuntimeContext& ctx,
                                      const char* op,
                                      int64_t spatial,
                                      const Tensor& self,
                                      IntArrayRef kernel_size,
                                      IntArrayRef stride,
                                      IntArrayRef padding,
                                      IntArrayRef dilation,
                                      bool ceil_mode,
                                      Tensor& out,
                                      Tensor& indices) {
  std::tuple<Tensor&, Tensor&> result(out, indices);
  Window3d g;
  int64_t planes = 0;
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !check_dtype(ctx, op, "indices", indices, ScalarType::Long) ||
      !prepare_pool(ctx,
                    op,
                    self,
                    spatial,
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
  if (indices.strides() != out.strides()) {
    fail_arg(ctx, op, "indices must have out's dim order");
    return result;
  }
  const PoolStrides in_strides = pool_strides(self, spatial);
  ET_SWITCH_REALHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    const T* in = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    int64_t* idx = indices.mutable_data_ptr<int64_t>();
    for_each_window(
        g,
        planes,
        pool_strides(out, spatial),
        [&](int64_t p, int64_t oi, int64_t z0, int64_t y0, int64_t x0) {
          const T* src = in + in_strides.plane(p);
          C best = std::numeric_limits<C>::lowest();
          int64_t best_index = -1;
          bool found_nan = false;
          for (int64_t kz = 0; kz < g.kernel[0] && !found_nan; ++kz) {
            const int64_t iz = z0 + kz * g.dilation[0];
            for (int64_t ky = 0;
                 ky < g.kernel[1] && !found_nan && iz >= 0 && iz < g.in[0];
                 ++ky) {
              const int64_t iy = y0 + ky * g.dilation[1];
              for (int64_t kx = 0; kx < g.kernel[2] && iy >= 0 && iy < g.in[1];
                   ++kx) {
                const int64_t ix = x0 + kx * g.dilation[2];
                if (ix < 0 || ix >= g.in[2]) {
                  continue;
                }
                // Indices count within the plane in row-major order.
                const int64_t at = (iz * g.in[1] + iy) * g.in[2] + ix;
                const C v = static_cast<C>(src[in_strides.at(iz, iy, ix)]);
                if constexpr (std::is_floating_point<C>::value) {
                  found_nan = std::isnan(v);
                }
                // NaN wins and ends the search, as in PyTorch.
                if (best_index < 0 || v > best || found_nan) {
                  best = v;
                  best_index = at;
                }
                if (found_nan) {
                  break;
                }
              }
            }
          }
          o[oi] = static_cast<T>(best);
          idx[oi] = best_index;
        });
  });
  return result;
}

Tensor& avg_pool(KernelRuntimeContext& ctx,
                 const char* op,
                 int64_t spatial,
                 const Tensor& self,
                 IntArrayRef kernel_size,
                 IntArrayRef stride,
                 IntArrayRef padding,
                 bool ceil_mode,
                 bool count_include_pad,
                 std::optional<int64_t> divisor_override,
                 Tensor& out) {
  Window3d g;
  int64_t planes = 0;
  const int64_t no_dilation[] = {1};
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !prepare_pool(ctx,
                    op,
                    self,
                    spatial,
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
  const PoolStrides in_strides = pool_strides(self, spatial);
  ET_SWITCH_REALHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = AverageType<T>;
    const T* in = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for_each_window(
        g,
        planes,
        pool_strides(out, spatial),
        [&](int64_t p, int64_t oi, int64_t z0, int64_t y0, int64_t x0) {
          const T* src = in + in_strides.plane(p);
          int64_t lo[3], hi[3];
          const int64_t divisor = average_window(
              g, z0, y0, x0, count_include_pad, divisor_override, lo, hi);
          C sum = 0;
          for (int64_t iz = lo[0]; iz < hi[0]; ++iz) {
            for (int64_t iy = lo[1]; iy < hi[1]; ++iy) {
              for (int64_t ix = lo[2]; ix < hi[2]; ++ix) {
                sum += static_cast<C>(src[in_strides.at(iz, iy, ix)]);
              }
            }
          }
          o[oi] = divisor == 0 ? T(0)
                               : static_cast<T>(sum / static_cast<C>(divisor));
        });
  });
  return out;
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
  return max_pool(ctx,
                  "max_pool2d_with_indices.out",
                  2,
                  self,
                  kernel_size,
                  stride,
                  padding,
                  dilation,
                  ceil_mode,
                  out,
                  indices);
}

std::tuple<Tensor&, Tensor&> max_pool3d_with_indices_out(
    KernelRuntimeContext& ctx,
    const Tensor& self,
    IntArrayRef kernel_size,
    IntArrayRef stride,
    IntArrayRef padding,
    IntArrayRef dilation,
    bool ceil_mode,
    Tensor& out,
    Tensor& indices) {
  return max_pool(ctx,
                  "max_pool3d_with_indices.out",
                  3,
                  self,
                  kernel_size,
                  stride,
                  padding,
                  dilation,
                  ceil_mode,
                  out,
                  indices);
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
  return avg_pool(ctx,
                  "avg_pool2d.out",
                  2,
                  self,
                  kernel_size,
                  stride,
                  padding,
                  ceil_mode,
                  count_include_pad,
                  divisor_override,
                  out);
}

Tensor& avg_pool3d_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       IntArrayRef kernel_size,
                       IntArrayRef stride,
                       IntArrayRef padding,
                       bool ceil_mode,
                       bool count_include_pad,
                       std::optional<int64_t> divisor_override,
                       Tensor& out) {
  return avg_pool(ctx,
                  "avg_pool3d.out",
                  3,
                  self,
                  kernel_size,
                  stride,
                  padding,
                  ceil_mode,
                  count_include_pad,
                  divisor_override,
                  out);
}

Tensor& avg_pool1d_out(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       IntArrayRef kernel_size,
                       IntArrayRef stride,
                       IntArrayRef padding,
                       bool ceil_mode,
                       bool count_include_pad,
                       Tensor& out) {
  return avg_pool(ctx,
                  "avg_pool1d.out",
                  1,
                  self,
                  kernel_size,
                  stride,
                  padding,
                  ceil_mode,
                  count_include_pad,
                  std::nullopt,
                  out);
}

// Gradient of avg_pool2d: each window spreads grad / divisor over the input
// elements it averaged.
Tensor& avg_pool2d_backward_grad_input(KernelRuntimeContext& ctx,
                                       const Tensor& grad_output,
                                       const Tensor& self,
                                       IntArrayRef kernel_size,
                                       IntArrayRef stride,
                                       IntArrayRef padding,
                                       bool ceil_mode,
                                       bool count_include_pad,
                                       std::optional<int64_t> divisor_override,
                                       Tensor& grad_input) {
  const char* op = "avg_pool2d_backward.grad_input";
  Window3d g;
  int64_t planes = 0;
  const int64_t no_dilation[] = {1};
  if (!prepare_pool(ctx,
                    op,
                    self,
                    2,
                    kernel_size,
                    stride,
                    padding,
                    IntArrayRef(no_dilation),
                    ceil_mode,
                    {},
                    &g,
                    &planes) ||
      !prepare_pool_grad(ctx, op, grad_output, self, g, 2, grad_input)) {
    return grad_input;
  }
  if (divisor_override.has_value() && *divisor_override == 0) {
    fail_arg(ctx, op, "divisor_override must be non-zero");
    return grad_input;
  }
  ET_SWITCH_REALHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    // Integer grads divide in integers, as eager does.
    using C = AverageType<T>;
    const T* grad = grad_output.const_data_ptr<T>();
    T* gi = grad_input.mutable_data_ptr<T>();
    for_each_window(
        g,
        planes,
        pool_strides(grad_output, 2),
        [&](int64_t p, int64_t oi, int64_t z0, int64_t y0, int64_t x0) {
          int64_t lo[3], hi[3];
          const int64_t divisor = average_window(
              g, z0, y0, x0, count_include_pad, divisor_override, lo, hi);
          if (divisor == 0) {
            return;
          }
          const C share = static_cast<C>(grad[oi]) / static_cast<C>(divisor);
          T* dst = gi + p * g.in_volume();
          for (int64_t iz = lo[0]; iz < hi[0]; ++iz) {
            for (int64_t iy = lo[1]; iy < hi[1]; ++iy) {
              for (int64_t ix = lo[2]; ix < hi[2]; ++ix) {
                T& target = dst[(iz * g.in[1] + iy) * g.in[2] + ix];
                target = static_cast<T>(static_cast<C>(target) + share);
              }
            }
          }
        });
  });
  return grad_input;
}

// Gradient of max_pool2d: each output's grad goes to the input element its
// index recorded.
Tensor& max_pool2d_with_indices_backward_grad_input(KernelRuntimeContext& ctx,
                                                    const Tensor& grad_output,
                                                    const Tensor& self,
                                                    IntArrayRef kernel_size,
                                                    IntArrayRef stride,
                                                    IntArrayRef padding,
                                                    IntArrayRef dilation,
                                                    bool ceil_mode,
                                                    const Tensor& indices,
                                                    Tensor& grad_input) {
  const char* op = "max_pool2d_with_indices_backward.grad_input";
  Window3d g;
  int64_t planes = 0;
  if (!prepare_pool(ctx,
                    op,
                    self,
                    2,
                    kernel_size,
                    stride,
                    padding,
                    dilation,
                    ceil_mode,
                    {},
                    &g,
                    &planes) ||
      !check_dtype(ctx, op, "indices", indices, ScalarType::Long) ||
      !check_default_dim_order(ctx, op, {&indices}) ||
      !prepare_pool_grad(ctx, op, grad_output, self, g, 2, grad_input)) {
    return grad_input;
  }
  if (indices.sizes() != grad_output.sizes()) {
    fail_arg(ctx, op, "indices must have grad_output's shape");
    return grad_input;
  }
  ET_SWITCH_REALHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<std::is_same<T, double>::value, double, float>;
    const T* grad = grad_output.const_data_ptr<T>();
    const int64_t* idx = indices.const_data_ptr<int64_t>();
    T* gi = grad_input.mutable_data_ptr<T>();
    const int64_t per_plane = g.out_volume();
    for (int64_t oi = 0; oi < planes * per_plane; ++oi) {
      const int64_t at = idx[oi];
      if (at < 0 || at >= g.in_volume()) {
        fail_arg(ctx,
                 op,
                 "index %" PRId64 " at %" PRId64 " is outside the %" PRId64
                 "-element input plane",
                 at,
                 oi,
                 g.in_volume());
        return;
      }
      T& target = gi[(oi / per_plane) * g.in_volume() + at];
      target =
          static_cast<T>(static_cast<C>(target) + static_cast<C>(grad[oi]));
    }
  });
  return grad_input;
}

} // namespace native
} // namespace executor
} // namespace torch
