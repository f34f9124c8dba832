// Spatial resampling over the last two dims of [N, C, H, W]: nearest and
// bilinear upsampling, and adaptive average pooling.

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
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const T* in = input.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t y = 0; y < out_hw[0]; ++y) {
      const double sy =
          bilinear_source(y, ih, out_hw[0], scale[0], align_corners);
      const int64_t y0 = std::min<int64_t>(static_cast<int64_t>(sy), ih - 1);
      const int64_t y1 = std::min<int64_t>(y0 + 1, ih - 1);
      const float ly = static_cast<float>(sy - y0);
      for (int64_t x = 0; x < out_hw[1]; ++x) {
        const double sx =
            bilinear_source(x, iw, out_hw[1], scale[1], align_corners);
        const int64_t x0 = std::min<int64_t>(static_cast<int64_t>(sx), iw - 1);
        const int64_t x1 = std::min<int64_t>(x0 + 1, iw - 1);
        const float lx = static_cast<float>(sx - x0);
        for (int64_t p = 0; p < planes; ++p) {
          const T* plane = in + p * ih * iw;
          const float top = static_cast<float>(plane[y0 * iw + x0]) * (1 - lx) +
                            static_cast<float>(plane[y0 * iw + x1]) * lx;
          const float bottom =
              static_cast<float>(plane[y1 * iw + x0]) * (1 - lx) +
              static_cast<float>(plane[y1 * iw + x1]) * lx;
          o[(p * out_hw[0] + y) * out_hw[1] + x] =
              static_cast<T>(top * (1 - ly) + bottom * ly);
        }
      }
    }
  });
  return out;
}

namespace {

// Adaptive average pooling over the last `spatial` (2 or 3) dims, run as
// 3-d with unit leading dims: output cell o of an axis averages input
// [floor(o * in / out), ceil((o + 1) * in / out)).
Tensor& adaptive_avg_pool(KernelRuntimeContext& ctx,
                          const char* op,
                          const Tensor& self,
                          int64_t spatial,
                          IntArrayRef output_size,
                          Tensor& out) {
  bool valid = static_cast<int64_t>(output_size.size()) == spatial;
  for (size_t i = 0; valid && i < output_size.size(); ++i) {
    valid = output_size[i] > 0;
  }
  if (!check_rank(ctx, op, "self", self, {spatial + 1, spatial + 2}) ||
      !valid) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(
          ctx, op, "output_size must hold %" PRId64 " positive sizes", spatial);
    }
    return out;
  }
  const int64_t rank = self.dim();
  int64_t in_size[3] = {1, 1, 1};
  int64_t out_size[3] = {1, 1, 1};
  Shape shape;
  for (int64_t d = 0; d < rank - spatial; ++d) {
    shape.push_back(self.size(d));
  }
  for (int64_t i = 0; i < spatial; ++i) {
    in_size[3 - spatial + i] = self.size(rank - spatial + i);
    out_size[3 - spatial + i] = output_size[i];
    shape.push_back(output_size[i]);
  }
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self, &out}) ||
      !resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  const int64_t in_volume = in_size[0] * in_size[1] * in_size[2];
  const int64_t planes = in_volume == 0 ? 0 : self.numel() / in_volume;
  auto lo = [&](int axis, int64_t o) {
    return o * in_size[axis] / out_size[axis];
  };
  auto hi = [&](int axis, int64_t o) {
    return ((o + 1) * in_size[axis] + out_size[axis] - 1) / out_size[axis];
  };
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<std::is_same<T, double>::value, double, float>;
    const T* in = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t p = 0; p < planes; ++p) {
      const T* plane = in + p * in_volume;
      for (int64_t z = 0; z < out_size[0]; ++z) {
        for (int64_t y = 0; y < out_size[1]; ++y) {
          for (int64_t x = 0; x < out_size[2]; ++x) {
            C sum = 0;
            for (int64_t iz = lo(0, z); iz < hi(0, z); ++iz) {
              for (int64_t iy = lo(1, y); iy < hi(1, y); ++iy) {
                for (int64_t ix = lo(2, x); ix < hi(2, x); ++ix) {
                  sum += static_cast<C>(
                      plane[(iz * in_size[1] + iy) * in_size[2] + ix]);
                }
              }
            }
            const int64_t count = (hi(0, z) - lo(0, z)) *
                                  (hi(1, y) - lo(1, y)) * (hi(2, x) - lo(2, x));
            *o++ = static_cast<T>(sum / static_cast<C>(count));
          }
        }
      }
    }
  });
  return out;
}

} // namespace

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

} // namespace native
} // namespace executor
} // namespace torch
