// grid_sampler_2d: samples input [N, C, H, W] at the normalized (x, y)
// positions of grid [N, Ho, Wo, 2], bilinearly or at the nearest pixel,
// with zeros, border or reflection padding.

#include <cmath>

#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// Reflects `x` into [low2 / 2, high2 / 2] (bounds given doubled so that
// half-pixel edges stay integral).
double reflect(double x, double low2, double high2) {
  if (low2 == high2) {
    return 0;
  }
  const double low = low2 / 2;
  const double span = (high2 - low2) / 2;
  x = std::fabs(x - low);
  const double extra = std::fmod(x, span);
  const bool even = static_cast<int64_t>(std::floor(x / span)) % 2 == 0;
  return even ? extra + low : span - extra + low;
}

// Rounds each intermediate result like eager's kernel for T: 16-bit types
// round every operation to T (eager's CPU kernel computes in T); float and
// double keep full double precision.
template <typename T>
double rounded(double v) {
  if constexpr (internal::is_16bit_float<T>) {
    return static_cast<double>(static_cast<float>(static_cast<T>(v)));
  } else {
    return v;
  }
}

// Maps a normalized grid coordinate to a pixel coordinate of an axis of
// `size` pixels, applying border or reflection padding.
template <typename T>
double source_coordinate(double g,
                         int64_t size,
                         int64_t padding,
                         bool align_corners) {
  auto r = rounded<T>;
  double x = align_corners ? r(r(r(g + 1) / 2) * (size - 1))
                           : r(r(r(r(g + 1) * size) - 1) / 2);
  if (padding == kReflection) {
    x = r(align_corners ? reflect(x, 0, 2.0 * (size - 1))
                        : reflect(x, -1, 2.0 * size - 1));
  }
  if (padding != kZeros) {
    x = x < 0 ? 0 : (x > size - 1 ? size - 1 : x);
  }
  return x;
}

} // namespace

Tensor& grid_sampler_2d_out(KernelRuntimeContext& ctx,
                            const Tensor& input,
                            const Tensor& grid,
                            int64_t interpolation_mode,
                            int64_t padding_mode,
                            bool align_corners,
                            Tensor& out) {
  const char* op = "grid_sampler_2d.out";
  if (input.dim() != 4 || grid.dim() != 4 || grid.size(3) != 2 ||
      grid.size(0) != input.size(0)) {
    fail_arg(ctx, op, "needs input [N, C, H, W] and grid [N, Ho, Wo, 2]");
    return out;
  }
  if ((interpolation_mode != kBilinear && interpolation_mode != kNearest) ||
      padding_mode < kZeros || padding_mode > kReflection) {
    fail_arg(ctx,
             op,
             "supports bilinear and nearest interpolation with "
             "zeros, border or reflection padding");
    return out;
  }
  Shape shape;
  shape.push_back(input.size(0));
  shape.push_back(input.size(1));
  shape.push_back(grid.size(1));
  shape.push_back(grid.size(2));
  if (!check_same_dtype(ctx, op, "grid", grid, input) ||
      !check_same_dtype(ctx, op, "out", out, input) ||
      !check_default_dim_order(ctx, op, {&input, &grid}) ||
      !resize_out(ctx, op, "out", out, shape.ref()) ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  const int64_t n_count = input.size(0), channels = input.size(1);
  const int64_t h = input.size(2), w = input.size(3);
  const int64_t oh = grid.size(1), ow = grid.size(2);
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const T* in = input.const_data_ptr<T>();
    const T* g = grid.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    auto pixel = [&](const T* plane, int64_t y, int64_t x) {
      // Zero padding: taps outside the input read 0.
      return (y < 0 || y >= h || x < 0 || x >= w)
                 ? 0.0
                 : internal::convert<double>(plane[y * w + x]);
    };
    auto r = rounded<T>;
    for (int64_t n = 0; n < n_count; ++n) {
      for (int64_t i = 0; i < oh * ow; ++i) {
        const T* gp = g + (n * oh * ow + i) * 2;
        const double x = source_coordinate<T>(
            internal::convert<double>(gp[0]), w, padding_mode, align_corners);
        const double y = source_coordinate<T>(
            internal::convert<double>(gp[1]), h, padding_mode, align_corners);
        const bool defined = !std::isnan(x) && !std::isnan(y);
        // Bilinear taps (nw, ne, sw, se) and their weights.
        const int64_t x0 = defined ? static_cast<int64_t>(std::floor(x)) : 0;
        const int64_t y0 = defined ? static_cast<int64_t>(std::floor(y)) : 0;
        const double weight[4] = {r(r(x0 + 1 - x) * r(y0 + 1 - y)),
                                  r(r(x - x0) * r(y0 + 1 - y)),
                                  r(r(x0 + 1 - x) * r(y - y0)),
                                  r(r(x - x0) * r(y - y0))};
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = in + (n * channels + c) * h * w;
          double v = 0; // NaN positions sample nothing
          if (defined && interpolation_mode == kNearest) {
            v = pixel(plane,
                      static_cast<int64_t>(std::nearbyint(y)),
                      static_cast<int64_t>(std::nearbyint(x)));
          } else if (defined) {
            for (int k = 0; k < 4; ++k) {
              v = r(v + r(pixel(plane, y0 + k / 2, x0 + k % 2) * weight[k]));
            }
          }
          o[((n * channels + c) * oh * ow) + i] = internal::convert<T>(v);
        }
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
