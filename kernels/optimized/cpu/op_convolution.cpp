// convolution on float32, 1-D and 2-D, not transposed, into an NCHW
// output: one GEMM per image and group (weight [out_c, in_c * kh * kw]
// times the image's im2col matrix, read in place: blas/gemm.h), and a
// direct loop for depthwise convolutions, whose one-row GEMMs would not
// pay. The input may have any dim order. Everything else goes to the
// portable kernel, which also reports bad arguments.

#include <algorithm>

#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/kernels/portable/util/spatial.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::GemmB;
using ::executorch::kernels::optimized::GemmEpilogue;
using ::executorch::kernels::optimized::Im2colView;
using ::executorch::kernels::optimized::MatrixView;
using ::executorch::kernels::optimized::sgemm;
using ::executorch::kernels::optimized::sgemm_scratch_bytes;
using ::executorch::kernels::optimized::thread_scratch;

// A 1-D convolution is a 2-D one over a unit H dim.
struct Geometry {
  int64_t batch, in_c, out_c, groups;
  int64_t in_h, in_w, kernel_h, kernel_w, out_h, out_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  // Input strides (any dim order).
  int64_t in_sn, in_sc, in_sh, in_sw;
};

// Fills `g` when the fast path takes these arguments.
bool fast_geometry(const Tensor& input,
                   const Tensor& weight,
                   const std::optional<Tensor>& bias,
                   IntArrayRef stride,
                   IntArrayRef padding,
                   IntArrayRef dilation,
                   bool transposed,
                   int64_t groups,
                   const Tensor& out,
                   Geometry* g) {
  const int64_t rank = input.dim();
  if (transposed || (rank != 3 && rank != 4) || weight.dim() != rank ||
      input.scalar_type() != ScalarType::Float ||
      weight.scalar_type() != ScalarType::Float ||
      out.scalar_type() != ScalarType::Float ||
      !::executorch::runtime::tensor_is_contiguous(weight) || groups <= 0 ||
      input.size(1) % groups != 0 || weight.size(0) % groups != 0 ||
      weight.size(1) * groups != input.size(1)) {
    return false;
  }
  if (bias.has_value() &&
      (bias->scalar_type() != ScalarType::Float || bias->dim() != 1 ||
       bias->size(0) != weight.size(0))) {
    return false;
  }
  const bool is_1d = rank == 3;
  const auto s = input.strides();
  *g = Geometry{};
  g->batch = input.size(0);
  g->in_c = input.size(1);
  g->out_c = weight.size(0);
  g->groups = groups;
  g->in_sn = s[0];
  g->in_sc = s[1];
  g->in_sh = is_1d ? 0 : s[2];
  g->in_sw = s[rank - 1];
  g->in_h = is_1d ? 1 : input.size(2);
  g->in_w = input.size(rank - 1);
  g->kernel_h = is_1d ? 1 : weight.size(2);
  g->kernel_w = weight.size(rank - 1);
  const size_t w_index = is_1d ? 0 : 1;
  g->stride_h = is_1d ? 1 : param_at(stride, 0, 1);
  g->stride_w = param_at(stride, w_index, 1);
  g->pad_h = is_1d ? 0 : param_at(padding, 0, 0);
  g->pad_w = param_at(padding, w_index, 0);
  g->dilation_h = is_1d ? 1 : param_at(dilation, 0, 1);
  g->dilation_w = param_at(dilation, w_index, 1);
  if (g->stride_h <= 0 || g->stride_w <= 0 || g->pad_h < 0 || g->pad_w < 0 ||
      g->dilation_h <= 0 || g->dilation_w <= 0) {
    return false;
  }
  g->out_h = window_output_size(
      g->in_h, g->kernel_h, g->stride_h, g->pad_h, g->dilation_h, false);
  g->out_w = window_output_size(
      g->in_w, g->kernel_w, g->stride_w, g->pad_w, g->dilation_w, false);
  return g->out_h > 0 && g->out_w > 0;
}

// Depthwise: each channel convolved with its own kernel. The inner loop
// runs along an output row, contiguous in the output (and in the input
// for unit stride), so it vectorizes.
void depthwise(const Geometry& g,
               const float* in,
               const float* w,
               const float* bias,
               float* out) {
  const int64_t planes = g.batch * g.out_c;
  const int64_t plane = g.out_h * g.out_w;
  const int64_t multiplier = g.out_c / g.in_c;
  ::executorch::extension::parallel_for(
      0,
      planes,
      std::max<int64_t>(1, 8192 / std::max<int64_t>(plane, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / g.out_c;
          const int64_t oc = p % g.out_c;
          const float* src = in + n * g.in_sn + oc / multiplier * g.in_sc;
          const float* kernel = w + oc * g.kernel_h * g.kernel_w;
          float* dst = out + p * plane;
          std::fill(dst, dst + plane, bias != nullptr ? bias[oc] : 0.0f);
          for (int64_t oy = 0; oy < g.out_h; ++oy) {
            float* row = dst + oy * g.out_w;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
              const int64_t y = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
              if (y < 0 || y >= g.in_h) {
                continue;
              }
              const float* src_row = src + y * g.in_sh;
              for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                const float k = kernel[ky * g.kernel_w + kx];
                const int64_t shift = kx * g.dilation_w - g.pad_w;
                // Output columns whose input column is inside the row:
                // 0 <= ox * stride_w + shift < in_w.
                const int64_t first =
                    shift >= 0 ? 0 : (-shift + g.stride_w - 1) / g.stride_w;
                const int64_t last =
                    g.in_w - 1 - shift < 0
                        ? 0
                        : std::min<int64_t>(
                              g.out_w, (g.in_w - 1 - shift) / g.stride_w + 1);
                if (g.stride_w == 1 && g.in_sw == 1) {
                  const float* s = src_row + shift;
                  for (int64_t ox = first; ox < last; ++ox) {
                    row[ox] += k * s[ox];
                  }
                } else {
                  for (int64_t ox = first; ox < last; ++ox) {
                    row[ox] += k * src_row[(ox * g.stride_w + shift) * g.in_sw];
                  }
                }
              }
            }
          }
        }
      });
}

bool gemm_convolution(KernelRuntimeContext& ctx,
                      const Geometry& g,
                      const float* in,
                      const float* w,
                      const float* bias,
                      float* out) {
  const int64_t group_in = g.in_c / g.groups;
  const int64_t group_out = g.out_c / g.groups;
  const int64_t depth = group_in * g.kernel_h * g.kernel_w;
  const int64_t pixels = g.out_h * g.out_w;
  // A 1x1 convolution with unit stride and no padding over rows whose
  // pixels are evenly spaced (NCHW or channels-last) is a plain product:
  // its im2col matrix is the image itself, [in_c, pixels].
  const bool pointwise = g.kernel_h == 1 && g.kernel_w == 1 &&
                         g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 &&
                         g.pad_w == 0 &&
                         (g.in_h == 1 || g.in_sh == g.in_w * g.in_sw);
  const size_t scratch_bytes = sgemm_scratch_bytes(group_out, pixels, depth);
  void* scratch = thread_scratch(scratch_bytes);
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      Im2colView view{};
      view.image = in + n * g.in_sn + grp * group_in * g.in_sc;
      view.channels = group_in;
      view.height = g.in_h;
      view.width = g.in_w;
      view.stride_c = g.in_sc;
      view.stride_h = g.in_sh;
      view.stride_w = g.in_sw;
      view.kernel_h = g.kernel_h;
      view.kernel_w = g.kernel_w;
      view.step_h = g.stride_h;
      view.step_w = g.stride_w;
      view.pad_h = g.pad_h;
      view.pad_w = g.pad_w;
      view.dilation_h = g.dilation_h;
      view.dilation_w = g.dilation_w;
      view.out_h = g.out_h;
      view.out_w = g.out_w;
      GemmEpilogue epilogue;
      if (bias != nullptr) {
        epilogue.bias = bias + grp * group_out;
        epilogue.bias_row_stride = 1;
      }
      const MatrixView weights{w + grp * group_out * depth, depth, 1};
      float* c = out + (n * g.out_c + grp * group_out) * pixels;
      if (!sgemm(group_out,
                 pixels,
                 depth,
                 weights,
                 pointwise ? GemmB::matrix_of(MatrixView{
                                 view.image, g.in_sc, g.in_sw})
                           : GemmB::im2col_of(view),
                 c,
                 pixels,
                 epilogue,
                 scratch,
                 scratch_bytes)) {
        fail_arg(ctx,
                 "convolution.out",
                 "out of memory for the GEMM's %zu-byte scratch",
                 scratch_bytes);
        return false;
      }
    }
  }
  return true;
}

} // namespace

Tensor& opt_convolution_out(KernelRuntimeContext& ctx,
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
  Geometry g;
  if (!fast_geometry(input,
                     weight,
                     bias,
                     stride,
                     padding,
                     dilation,
                     transposed,
                     groups,
                     out,
                     &g)) {
    return convolution_out(ctx,
                           input,
                           weight,
                           bias,
                           stride,
                           padding,
                           dilation,
                           transposed,
                           output_padding,
                           groups,
                           out);
  }
  const bool is_1d = input.dim() == 3;
  ::executorch::aten::SizesType shape[4] = {
      static_cast<::executorch::aten::SizesType>(g.batch),
      static_cast<::executorch::aten::SizesType>(g.out_c),
      static_cast<::executorch::aten::SizesType>(g.out_h),
      static_cast<::executorch::aten::SizesType>(g.out_w)};
  if (is_1d) {
    shape[2] = shape[3];
  }
  if (!resize_out(ctx,
                  "convolution.out",
                  "out",
                  out,
                  {shape, static_cast<size_t>(input.dim())})) {
    return out;
  }
  if (!::executorch::runtime::tensor_is_contiguous(out)) {
    return convolution_out(ctx,
                           input,
                           weight,
                           bias,
                           stride,
                           padding,
                           dilation,
                           transposed,
                           output_padding,
                           groups,
                           out);
  }
  const float* bias_data =
      bias.has_value() ? bias->const_data_ptr<float>() : nullptr;
  if (g.batch * g.out_c * g.out_h * g.out_w == 0) {
    return out;
  }
  if (g.groups == g.in_c && g.groups > 1) {
    depthwise(g,
              input.const_data_ptr<float>(),
              weight.const_data_ptr<float>(),
              bias_data,
              out.mutable_data_ptr<float>());
  } else {
    gemm_convolution(ctx,
                     g,
                     input.const_data_ptr<float>(),
                     weight.const_data_ptr<float>(),
                     bias_data,
                     out.mutable_data_ptr<float>());
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
