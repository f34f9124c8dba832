// convolution on float32, 1-D and 2-D, not transposed, into an NCHW
// output: one GEMM per image and group (weight [out_c, in_c * kh * kw]
// times the image's im2col matrix, read in place: blas/gemm.h), a direct
// loop for depthwise convolutions, whose one-row GEMMs would not pay, and
// Winograd F(4x4, 3x3) (cpu/winograd.h) for 3x3 stride-1 one-group
// convolutions of the shapes where it pays. The input may have any dim
// order. Everything else goes to the portable kernel, which also reports
// bad arguments.

#include <algorithm>
#include <cstring>

#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/optimized/cpu/strided_copy.h>
#include <executorch/kernels/optimized/cpu/winograd.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/kernels/portable/util/spatial.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::copy_every_other_float;
using ::executorch::kernels::optimized::copy_strided_to_contiguous;
using ::executorch::kernels::optimized::GemmB;
using ::executorch::kernels::optimized::GemmEpilogue;
using ::executorch::kernels::optimized::Im2colView;
using ::executorch::kernels::optimized::kWeightedRowsOverread;
using ::executorch::kernels::optimized::MatrixView;
using ::executorch::kernels::optimized::sgemm;
using ::executorch::kernels::optimized::sgemm_scratch_bytes;
using ::executorch::kernels::optimized::simd;
using ::executorch::kernels::optimized::SimdKernels;
using ::executorch::kernels::optimized::thread_scratch;
using ::executorch::kernels::optimized::Winograd3x3;
using ::executorch::kernels::optimized::winograd_convolutions_run;
using ::executorch::kernels::optimized::WinogradIo;

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

// Depthwise: each channel convolved with its own kernel. A plane's input
// is first copied into scratch with its left and right padding as zeros
// and its columns split by phase modulo the stride (phase r of a row holds
// padded columns r, r + stride_w, ...), so that every kernel tap reads a
// contiguous run of the copy for a whole output row. An output row is then
// the weighted sum of kernel_h * kernel_w such runs (weighted_rows, with
// the accumulators in registers); taps above or below the image are
// skipped.
struct DepthwisePlane {
  int64_t phase_len; // floats per phase of a row
  int64_t row_floats; // stride_w phases

  explicit DepthwisePlane(const Geometry& g) {
    // Padded columns any tap reads: up to the last output's last tap, and
    // at least the image itself.
    const int64_t padded_w =
        std::max(g.pad_w + g.in_w,
                 (g.out_w - 1) * g.stride_w +
                     (g.kernel_w - 1) * g.dilation_w + 1);
    phase_len = (padded_w + g.stride_w - 1) / g.stride_w;
    row_floats = phase_len * g.stride_w;
  }

  // Copies input channel `src` into `dst` (floats() floats): per phase r,
  // zeros, the image columns r - pad_w, r - pad_w + stride_w, ... that
  // exist (a memcpy at unit strides, SSE shuffles at stride 2), zeros.
  void fill(const Geometry& g, const float* src, float* dst) const {
    for (int64_t y = 0; y < g.in_h; ++y) {
      const float* in_row = src + y * g.in_sh;
      float* row = dst + y * row_floats;
      for (int64_t r = 0; r < g.stride_w; ++r) {
        float* phase = row + r * phase_len;
        // Entries i with 0 <= r + i * stride_w - pad_w < in_w.
        const int64_t first =
            std::min(phase_len,
                     std::max<int64_t>(0, g.pad_w - r + g.stride_w - 1) /
                         g.stride_w);
        const int64_t last_x = g.in_w - 1 + g.pad_w - r;
        const int64_t last = last_x < 0
            ? first
            : std::clamp<int64_t>(last_x / g.stride_w + 1, first, phase_len);
        std::fill(phase, phase + first, 0.0f);
        const int64_t x0 = r + first * g.stride_w - g.pad_w;
        if (g.stride_w == 1 && g.in_sw == 1) {
          std::memcpy(
              phase + first, in_row + x0, (last - first) * sizeof(float));
        } else if (g.stride_w == 2 && g.in_sw == 1) {
          copy_every_other_float(in_row + x0, last - first, phase + first);
        } else {
          for (int64_t i = first; i < last; ++i) {
            phase[i] = in_row[(x0 + (i - first) * g.stride_w) * g.in_sw];
          }
        }
        std::fill(phase + last, phase + phase_len, 0.0f);
      }
    }
    // weighted_rows reads up to a vector past a row's end.
    std::fill(dst + g.in_h * row_floats, dst + floats(g), 0.0f);
  }

  int64_t floats(const Geometry& g) const {
    return g.in_h * row_floats + kWeightedRowsOverread;
  }
};

bool depthwise(KernelRuntimeContext& ctx,
               const Geometry& g,
               const float* in,
               const float* w,
               const float* bias,
               float* out) {
  const int64_t planes = g.batch * g.out_c;
  const int64_t plane = g.out_h * g.out_w;
  const int64_t multiplier = g.out_c / g.in_c;
  const int64_t taps = g.kernel_h * g.kernel_w;
  const DepthwisePlane layout(g);
  // Per thread: the plane's copy, padded to an even number of floats so that
  // the taps' row pointers after it are aligned, then the pointers.
  static_assert(alignof(const float*) <= 2 * sizeof(float));
  const size_t copy_floats = static_cast<size_t>(layout.floats(g));
  const size_t copy_bytes = (copy_floats + copy_floats % 2) * sizeof(float);
  const size_t scratch_bytes = copy_bytes + taps * sizeof(const float*);
  const SimdKernels& kernels = simd();
  bool out_of_memory = false;
  ::executorch::extension::parallel_for(
      0,
      planes,
      std::max<int64_t>(1, 8192 / std::max<int64_t>(plane, 1)),
      [&](int64_t begin, int64_t end) {
        void* scratch = thread_scratch(scratch_bytes);
        if (scratch == nullptr) {
          out_of_memory = true;
          return;
        }
        float* copy = static_cast<float*>(scratch);
        const float** rows = reinterpret_cast<const float**>(
            static_cast<char*>(scratch) + copy_bytes);
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / g.out_c;
          const int64_t oc = p % g.out_c;
          layout.fill(g, in + n * g.in_sn + oc / multiplier * g.in_sc, copy);
          const float* kernel = w + oc * taps;
          for (int64_t oy = 0; oy < g.out_h; ++oy) {
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
              const int64_t y = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
              for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                // Padded column ox * stride_w + kx * dilation_w is phase
                // (kx * dilation_w) % stride_w, index ox + shift / stride_w.
                const int64_t shift = kx * g.dilation_w;
                rows[ky * g.kernel_w + kx] = y < 0 || y >= g.in_h
                    ? nullptr
                    : copy + y * layout.row_floats +
                        shift % g.stride_w * layout.phase_len +
                        shift / g.stride_w;
              }
            }
            kernels.weighted_rows(rows,
                                  kernel,
                                  taps,
                                  bias != nullptr ? bias[oc] : 0.0f,
                                  out + p * plane + oy * g.out_w,
                                  g.out_w);
          }
        }
      });
  if (out_of_memory) {
    fail_arg(ctx,
             "convolution.out",
             "out of memory for the depthwise convolution's %zu-byte scratch",
             scratch_bytes);
    return false;
  }
  return true;
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

bool takes_winograd(const Geometry& g) {
  return g.groups == 1 && g.kernel_h == 3 && g.kernel_w == 3 &&
         g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 &&
         Winograd3x3::pays(g.in_c, g.out_c, g.out_h * g.out_w);
}

// Winograd runs on channels-last activations: an input in another dim
// order is copied channels-last first, and the output is computed
// channels-last and copied into NCHW. The filter is transformed per call
// (a kernel keeps nothing between calls). One scratch block of the calling
// thread holds it all, and each thread's task scratch. What Winograd3x3
// does not take (an input whose strides the copy does not take) runs on
// the GEMM.
bool winograd_convolution(KernelRuntimeContext& ctx,
                          const Geometry& g,
                          const float* in,
                          const float* w,
                          const float* bias,
                          float* out) {
  Winograd3x3 wg;
  if (!wg.init(g.in_c, g.out_c)) {
    return gemm_convolution(ctx, g, in, w, bias, out);
  }
  const int64_t pixels = g.in_h * g.in_w;
  const int64_t out_pixels = g.out_h * g.out_w;
  const bool in_place = g.in_sc == 1;
  WinogradIo io;
  io.batch = g.batch;
  io.in_h = g.in_h;
  io.in_w = g.in_w;
  io.out_h = g.out_h;
  io.out_w = g.out_w;
  io.pad_top = g.pad_h;
  io.pad_left = g.pad_w;
  io.out_sn = out_pixels * g.out_c;
  io.out_sh = g.out_w * g.out_c;
  io.out_sw = g.out_c;
  const int64_t threads = ::executorch::extension::get_thread_count();
  const int64_t tasks = wg.tasks(io, threads);
  const size_t task_bytes = (wg.scratch_bytes(io, threads) + 63) / 64 * 64;
  const size_t packed_floats = (wg.packed_floats() + 15) / 16 * 16;
  const size_t in_floats =
      in_place
          ? 0
          : static_cast<size_t>((g.batch * pixels * g.in_c + 15) / 16 * 16);
  const size_t out_floats =
      static_cast<size_t>((g.batch * out_pixels * g.out_c + 15) / 16 * 16);
  const size_t scratch_bytes =
      (packed_floats + in_floats + out_floats) * sizeof(float) +
      task_bytes * static_cast<size_t>(threads);
  auto* packed = static_cast<float*>(thread_scratch(scratch_bytes));
  if (packed == nullptr) {
    fail_arg(ctx,
             "convolution.out",
             "out of memory for the Winograd convolution's %zu-byte scratch",
             scratch_bytes);
    return false;
  }
  float* in_nhwc = packed + packed_floats;
  float* out_nhwc = in_nhwc + in_floats;
  char* task_scratch = reinterpret_cast<char*>(out_nhwc + out_floats);
  wg.pack(w, g.in_c * 9, 9, 3, 1, bias, packed);
  if (in_place) {
    io.in = in;
    io.in_sn = g.in_sn;
    io.in_sh = g.in_sh;
    io.in_sw = g.in_sw;
  } else {
    const int64_t sizes[4] = {g.batch, g.in_h, g.in_w, g.in_c};
    const int64_t strides[4] = {g.in_sn, g.in_sh, g.in_sw, g.in_sc};
    if (!copy_strided_to_contiguous(
            in, strides, sizes, 4, sizeof(float), in_nhwc)) {
      return gemm_convolution(ctx, g, in, w, bias, out);
    }
    io.in = in_nhwc;
    io.in_sn = pixels * g.in_c;
    io.in_sh = g.in_w * g.in_c;
    io.in_sw = g.in_c;
  }
  io.out = out_nhwc;
  ::executorch::extension::parallel_for(
      0, tasks, 1, [&](int64_t begin, int64_t end) {
        void* scratch = task_scratch +
                        ::executorch::extension::get_thread_num() * task_bytes;
        for (int64_t t = begin; t < end; ++t) {
          wg.run(io, threads, t, scratch);
        }
      });
  const int64_t sizes[4] = {g.batch, g.out_c, g.out_h, g.out_w};
  const int64_t strides[4] = {io.out_sn, 1, io.out_sh, io.out_sw};
  copy_strided_to_contiguous(out_nhwc, strides, sizes, 4, sizeof(float), out);
  ++winograd_convolutions_run();
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
  if (takes_winograd(g)) {
    winograd_convolution(ctx,
                         g,
                         input.const_data_ptr<float>(),
                         weight.const_data_ptr<float>(),
                         bias_data,
                         out.mutable_data_ptr<float>());
  } else if (g.groups == g.in_c && g.groups > 1) {
    depthwise(ctx,
              g,
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
