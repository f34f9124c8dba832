// col2im (fold): sums sliding-window columns [N, C*kh*kw, L] back into
// images [N, C, H, W]; the inverse layout of unfold/im2col.

#include <cinttypes>

#include <executorch/kernels/portable/util/pointwise.h>
#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

Tensor& col2im_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   IntArrayRef output_size,
                   IntArrayRef kernel_size,
                   IntArrayRef dilation,
                   IntArrayRef padding,
                   IntArrayRef stride,
                   Tensor& out) {
  const char* op = "col2im.out";
  if ((self.dim() != 2 && self.dim() != 3) || output_size.size() != 2 ||
      kernel_size.size() != 2) {
    fail_arg(ctx,
             op,
             "needs a 2-d or 3-d input, and output_size and "
             "kernel_size with two entries");
    return out;
  }
  Window2d g;
  int64_t blocks = 1;
  for (size_t i = 0; i < 2; ++i) {
    g.kernel[i] = kernel_size[i];
    g.in[i] = output_size[i]; // the image being rebuilt
    g.stride[i] = param_at(stride, i, 1);
    g.pad[i] = param_at(padding, i, 0);
    g.dilation[i] = param_at(dilation, i, 1);
    if (g.kernel[i] <= 0 || g.stride[i] <= 0 || g.dilation[i] <= 0 ||
        g.pad[i] < 0 || g.in[i] <= 0) {
      fail_arg(ctx,
               op,
               "sizes, stride and dilation must be positive, "
               "padding >= 0");
      return out;
    }
    g.out[i] = window_output_size(
        g.in[i], g.kernel[i], g.stride[i], g.pad[i], g.dilation[i], false);
    blocks *= g.out[i];
  }
  const bool batched = self.dim() == 3;
  const int64_t batch = batched ? self.size(0) : 1;
  const int64_t rows = self.size(batched ? 1 : 0);
  const int64_t kernel_area = g.kernel[0] * g.kernel[1];
  if (rows % kernel_area != 0 || self.size(-1) != blocks) {
    fail_arg(ctx,
             op,
             "input of %" PRId64
             " rows and %zd blocks does not fit "
             "the kernel and output size (%" PRId64 " blocks)",
             rows,
             static_cast<ssize_t>(self.size(-1)),
             blocks);
    return out;
  }
  const int64_t channels = rows / kernel_area;
  Shape shape;
  if (batched) {
    shape.push_back(batch);
  }
  shape.push_back(channels);
  shape.push_back(g.in[0]);
  shape.push_back(g.in[1]);
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self, &out}) ||
      !resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  ET_SWITCH_FLOATHBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    const T* in = self.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    const int64_t image = g.in[0] * g.in[1];
    for (int64_t i = 0; i < batch * channels * image; ++i) {
      o[i] = static_cast<T>(0);
    }
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t c = r / kernel_area;
        const int64_t ky = (r / g.kernel[1]) % g.kernel[0];
        const int64_t kx = r % g.kernel[1];
        const T* col = in + (n * rows + r) * blocks;
        T* plane = o + (n * channels + c) * image;
        for (int64_t by = 0; by < g.out[0]; ++by) {
          const int64_t y = by * g.stride[0] - g.pad[0] + ky * g.dilation[0];
          if (y < 0 || y >= g.in[0]) {
            continue;
          }
          for (int64_t bx = 0; bx < g.out[1]; ++bx) {
            const int64_t x = bx * g.stride[1] - g.pad[1] + kx * g.dilation[1];
            if (x >= 0 && x < g.in[1]) {
              T& target = plane[y * g.in[1] + x];
              target = static_cast<T>(static_cast<C>(target) +
                                      static_cast<C>(col[by * g.out[1] + bx]));
            }
          }
        }
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
