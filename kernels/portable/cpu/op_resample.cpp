// Spatial resampling: nearest and bilinear upsampling over the last two
// dims of [N, C, H, W], and adaptive average pooling (1-d to 3-d, and the
// 2-d gradient).

#include <cinttypes>
#include <cmath>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Resolves the output size and the source-per-output scale along H and W
// from output_size or scale_factors (exactly one is given).
bool resolve_resize(KernelRuntimeContext& ctx,
                    const char* op,
                    const Tensor& in,
                    std::optional<IntArrayRef> output_size,
                    std::optional<ArrayRef<double>> scale_factors,
                    int64_t out_hw[2],
                    double scale[2]) {
  if (in.dim() != 4 || output_size.has_value() == scale_factors.has_value() ||
      (output_size.has_value() && output_size->size() != 2) ||
      (scale_factors.has_value() && scale_factors->size() != 2)) {
    fail_arg(ctx,
             op,
             "needs a 4-d input and either output_size or "
             "scale_factors with two entries");
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t in_size = in.size(2 + i);
    if (output_size.has_value()) {
      out_hw[i] = (*output_size)[i];
      scale[i] = out_hw[i] > 0 ? static_cast<double>(in_size) / out_hw[i] : 0;
    } else {
      out_hw[i] =
          static_cast<int64_t>(std::floor(in_size * (*scale_factors)[i]));
      scale[i] = 1.0 / (*scale_factors)[i];
    }
    if (out_hw[i] <= 0) {
      fail_arg(ctx, op, "output size must be positive");
      return false;
    }
  }
  return true;
}

bool resize_spatial(KernelRuntimeContext& ctx,
                    const char* op,
                    const Tensor& in,
                    const int64_t out_hw[2],
                    const Tensor& out) {
  Shape shape;
  shape.push_back(in.size(0));
  shape.push_back(in.size(1));
  shape.push_back(out_hw[0]);
  shape.push_back(out_hw[1]);
  return check_same_dtype(ctx, op, "out", out, in) &&
         check_default_dim_order(ctx, op, {&in, &out}) &&
         resize_out(ctx, op, "out", out, shape.ref());
}

// Source coordinate for output index `o` in bilinear interpolation.
double bilinear_source(
    int64_t o, int64_t in, int64_t out, double scale, bool align_corners) {
  if (align_corners) {
    return out > 1 ? static_cast<double>(o) * (in - 1) / (out - 1) : 0.0;
  }
  const double src = (o + 0.5) * scale - 0.5;
  return src < 0 ? 0 : src;
}

} // namespace

Tensor& upsample_nearest2d_vec_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    std::optional<IntArrayRef> output_size,
    std::optional<ArrayRef<double>> scale_factors,
    Tensor& out) {
  const char* op = "upsample_nearest2d.vec_out";
  int64_t out_hw[2];
  double scale[2];
  if (!resolve_resize(
          ctx, op, input, output_size, scale_factors, out_hw, scale) ||
      !resize_spatial(ctx, op, input, out_hw, out)) {
    return out;
  }
  const int64_t ih = input.size(2), iw = input.size(3);
  const int64_t planes = input.size(0) * input.size(1);
  ET_SWITCH_REALHBBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const T* in = input.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t y = 0; y < out_hw[0]; ++y) {
        const int64_t sy = std::min<int64_t>(
            static_cast<int64_t>(std::floor(y * scale[0])), ih - 1);
        for (int64_t x = 0; x < out_hw[1]; ++x) {
          const int64_t sx = std::min<int64_t>(
              static_cast<int64_t>(std::floor(x * scale[1])), iw - 1);
          o[(p * out_hw[0] + y) * out_hw[1] + x] = in[(p * ih + sy) * iw + sx];
        }
      }
    }
  });
  return out;
}

Tensor& upsample_bilinear2d_vec_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    std::optional<IntArrayRef> output_size,
    bool align_corners,
    std::optional<ArrayRef<double>> scale_factors,
    Tensor& out) {
  const char* op = "upsample_bilinear2d.vec_out";
  int64_t out_hw[2];
  double scale[2];
  if (!resolve_resize(
          ctx, op, input, output_size, scale_factors, out_hw, scale) ||
      !resize_spatial(ctx, op, input, out_hw, out)) {
    return out;
  }
  const int64_t ih = input.size(2), iw = input.size(3);
  const int64_t planes = input.size(0) * input.size(1);
  // Double interpolates in double, every other dtype in float; integer
  // dtypes (eager takes uint8) round to the nearest value, as eager does.
  ET_SWITCH_REALHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<std::is_same<T, double>::value, double, float>;
    const T* in = input.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t y = 0; y < out_hw[0]; ++y) {
      const double sy =
          bilinear_source(y, ih, out_hw[0], scale[0], align_corners);
      const int64_t y0 = std::min<int64_t>(static_cast<int64_t>(sy), ih - 1);
      const int64_t y1 = std::min<int64_t>(y0 + 1, ih - 1);
      const C ly = static_cast<C>(sy - y0);
      for (int64_t x = 0; x < out_hw[1]; ++x) {
        const double sx =
            bilinear_source(x, iw, out_hw[1], scale[1], align_corners);
        const int64_t x0 = std::min<int64_t>(static_cast<int64_t>(sx), iw - 1);
        const int64_t x1 = std::min<int64_t>(x0 + 1, iw - 1);
        const C lx = static_cast<C>(sx - x0);
        for (int64_t p = 0; p < planes; ++p) {
          const T* plane = in + p * ih * iw;
          const C top = static_cast<C>(plane[y0 * iw + x0]) * (1 - lx) +
                        static_cast<C>(plane[y0 * iw + x1]) * lx;
          const C bottom = static_cast<C>(plane[y1 * iw + x0]) * (1 - lx) +
                           static_cast<C>(plane[y1 * iw + x1]) * lx;
          const C value = top * (1 - ly) + bottom * ly;
          o[(p * out_hw[0] + y) * out_hw[1] + x] = static_cast<T>(
              std::is_integral<T>::value ? std::nearbyint(value) : value);
        }
      }
    }
  });
  return out;
}

namespace {

// Adaptive pooling geometry over up to 3 trailing dims (unit leading
// ones): output cell o of an axis covers input
// [floor(o * in / out), ceil((o + 1) * in / out)).
struct AdaptiveGrid {
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};

  int64_t in_volume() const {
    return in[0] * in[1] * in[2];
  }

  // Calls fn(plane, out_index, lo, hi) for every output cell of `planes`
  // planes, out_index counting cells in order.
  template <typename Fn>
  void for_each_cell(int64_t planes, Fn fn) const {
    int64_t index = 0;
    int64_t lo[3], hi[3];
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t z = 0; z < out[0]; ++z) {
        bounds(0, z, lo, hi);
        for (int64_t y = 0; y < out[1]; ++y) {
          bounds(1, y, lo, hi);
          for (int64_t x = 0; x < out[2]; ++x) {
            bounds(2, x, lo, hi);
            fn(p, index++, lo, hi);
          }
        }
      }
    }
  }

 private:
  void bounds(int axis, int64_t o, int64_t lo[3], int64_t hi[3]) const {
    lo[axis] = o * in[axis] / out[axis];
    hi[axis] = ((o + 1) * in[axis] + out[axis] - 1) / out[axis];
  }
};

// Sums then averages each cell in C.
template <typename T, typename C>
void average_cells(const AdaptiveGrid& grid,
                   int64_t planes,
                   const Tensor& self,
                   Tensor& out) {
  const T* in = self.const_data_ptr<T>();
  T* o = out.mutable_data_ptr<T>();
  grid.for_each_cell(
      planes, [&](int64_t p, int64_t oi, int64_t* lo, int64_t* hi) {
        const T* plane = in + p * grid.in_volume();
        C sum = C(0);
        for (int64_t iz = lo[0]; iz < hi[0]; ++iz) {
          for (int64_t iy = lo[1]; iy < hi[1]; ++iy) {
            for (int64_t ix = lo[2]; ix < hi[2]; ++ix) {
              sum = static_cast<C>(
                  sum + static_cast<C>(
                            plane[(iz * grid.in[1] + iy) * grid.in[2] + ix]));
            }
          }
        }
        const int64_t count =
            (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        o[oi] = static_cast<T>(sum / static_cast<C>(count));
      });
}

// Checks an adaptive pooling of self's last `spatial` (1 to 3) dims to
// `output_size` and fills `grid`; `shape` gets the pooled shape.
bool prepare_adaptive(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& self,
                      int64_t spatial,
                      IntArrayRef output_size,
                      AdaptiveGrid* grid,
                      Shape* shape) {
  bool valid = static_cast<int64_t>(output_size.size()) == spatial;
  for (size_t i = 0; valid && i < output_size.size(); ++i) {
    valid = output_size[i] > 0;
  }
  if (!check_rank(ctx, op, "self", self, {spatial + 1, spatial + 2}) ||
      !check_default_dim_order(ctx, op, {&self})) {
    return false;
  }
  if (!valid) {
    fail_arg(
        ctx, op, "output_size must hold %" PRId64 " positive sizes", spatial);
    return false;
  }
  const int64_t rank = self.dim();
  for (int64_t d = 0; d < rank - spatial; ++d) {
    shape->push_back(self.size(d));
  }
  for (int64_t i = 0; i < spatial; ++i) {
    grid->in[3 - spatial + i] = self.size(rank - spatial + i);
    grid->out[3 - spatial + i] = output_size[i];
    shape->push_back(output_size[i]);
  }
  return true;
}

int64_t plane_count(const Tensor& self, const AdaptiveGrid& grid) {
  return grid.in_volume() == 0 ? 0 : self.numel() / grid.in_volume();
}

Tensor& adaptive_avg_pool(KernelRuntimeContext& ctx,
                          const char* op,
                          const Tensor& self,
                          int64_t spatial,
                          IntArrayRef output_size,
                          Tensor& out) {
  AdaptiveGrid grid;
  Shape shape;
  if (!prepare_adaptive(ctx, op, self, spatial, output_size, &grid, &shape) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&out}) ||
      !resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  const int64_t planes = plane_count(self, grid);
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    // Eager's 3-d kernel sums 16-bit inputs in their own type (its 1-d and
    // 2-d kernels in float); matching it keeps results bit-identical.
    if (spatial == 3) {
      average_cells<T, T>(grid, planes, self, out);
    } else {
      using C =
          std::conditional_t<std::is_same<T, double>::value, double, float>;
      average_cells<T, C>(grid, planes, self, out);
    }
  });
  return out;
}

} // namespace

Tensor& adaptive_avg_pool1d_out(KernelRuntimeContext& ctx,
                                const Tensor& self,
                                IntArrayRef output_size,
                                Tensor& out) {
  return adaptive_avg_pool(
      ctx, "adaptive_avg_pool1d.out", self, 1, output_size, out);
}

Tensor& _adaptive_avg_pool2d_out(KernelRuntimeContext& ctx,
                                 const Tensor& self,
                                 IntArrayRef output_size,
                                 Tensor& out) {
  return adaptive_avg_pool(
      ctx, "_adaptive_avg_pool2d.out", self, 2, output_size, out);
}

Tensor& _adaptive_avg_pool3d_out(KernelRuntimeContext& ctx,
                                 const Tensor& self,
                                 IntArrayRef output_size,
                                 Tensor& out) {
  return adaptive_avg_pool(
      ctx, "_adaptive_avg_pool3d.out", self, 3, output_size, out);
}

// Gradient of _adaptive_avg_pool2d: each cell spreads grad / count over the
// input elements it averaged.
Tensor& _adaptive_avg_pool2d_backward_out(KernelRuntimeContext& ctx,
                                          const Tensor& grad_output,
                                          const Tensor& self,
                                          Tensor& out) {
  const char* op = "_adaptive_avg_pool2d_backward.out";
  if (grad_output.dim() != self.dim() || self.dim() < 2) {
    fail_arg(ctx, op, "grad_output must have self's rank (3 or 4)");
    return out;
  }
  const int64_t pooled[2] = {grad_output.size(grad_output.dim() - 2),
                             grad_output.size(grad_output.dim() - 1)};
  AdaptiveGrid grid;
  Shape shape;
  if (!prepare_adaptive(
          ctx, op, self, 2, IntArrayRef(pooled, 2), &grid, &shape)) {
    return out;
  }
  if (shape.ref() != grad_output.sizes()) {
    fail_arg(ctx, op, "grad_output's leading dims must match self's");
    return out;
  }
  if (!check_same_dtype(ctx, op, "grad_output", grad_output, self) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&grad_output}) ||
      !resize_like(ctx, op, out, self) ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  const int64_t planes = plane_count(self, grid);
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<std::is_same<T, double>::value, double, float>;
    const T* grad = grad_output.const_data_ptr<T>();
    T* gi = out.mutable_data_ptr<T>();
    for (ssize_t i = 0; i < out.numel(); ++i) {
      gi[i] = T(0);
    }
    grid.for_each_cell(
        planes, [&](int64_t p, int64_t oi, int64_t* lo, int64_t* hi) {
          const int64_t count =
              (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
          const C share = static_cast<C>(grad[oi]) / static_cast<C>(count);
          T* plane = gi + p * grid.in_volume();
          for (int64_t iy = lo[1]; iy < hi[1]; ++iy) {
            for (int64_t ix = lo[2]; ix < hi[2]; ++ix) {
              T& target = plane[iy * grid.in[2] + ix];
              target = static_cast<T>(static_cast<C>(target) + share);
            }
          }
        });
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
