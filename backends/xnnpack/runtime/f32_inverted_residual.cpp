#include <executorch/backends/xnnpack/runtime/f32_inverted_residual.h>

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST

#include <algorithm>
#include <atomic>

#include <executorch/backends/xnnpack/runtime/host_loops.h>
#include <executorch/kernels/optimized/cpu/scratch.h>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

// Output pixels per chunk: enough for the 1x1 convolutions' tiles to be
// full, few enough that a chunk's rows stay in L2 with the ring.
constexpr size_t kChunkPixels = 128;

// A core's L2 on the CPUs measured (1-2 MiB).
constexpr size_t kL2Bytes = size_t{1} << 20;

size_t round_up(size_t x, size_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

} // namespace

struct F32InvertedResidual::Task {
  const F32InvertedResidual* block;
  const float* in;
  size_t in_h, in_w;
  float* out;
  size_t out_h, out_w;
  size_t bands; // per image
  std::atomic<bool>* failed;
};

void F32InvertedResidual::Pointwise::pack(const F32PointwiseConv& conv,
                                          size_t block) {
  const size_t in_c = conv.in_channels;
  const size_t out_c = conv.out_channels;
  const size_t panel_floats = (in_c + 1) * block;
  const size_t blocks = (out_c + block - 1) / block;
  packed.assign(blocks * panel_floats, 0.0f);
  for (size_t c = 0; c < out_c; ++c) {
    float* panel = packed.data() + c / block * panel_floats + c % block;
    panel[0] = conv.bias != nullptr ? conv.bias[c] : 0.0f;
    for (size_t k = 0; k < in_c; ++k) {
      panel[(k + 1) * block] = conv.filter[c * in_c + k];
    }
  }
  in_channels = in_c;
  out_channels = out_c;
  output_min = conv.output_min;
  output_max = conv.output_max;
}

void F32InvertedResidual::Pointwise::run(
    const float* in,
    size_t pixels,
    float* out,
    const float* residual,
    f32_pw::PointwiseFunction function) const {
  f32_pw::PointwiseArgs a;
  a.in = in;
  a.in_stride = in_channels;
  a.pixels = pixels;
  a.in_channels = in_channels;
  a.out_channels = out_channels;
  a.packed = packed.data();
  a.out = out;
  a.out_stride = out_channels;
  a.output_min = output_min;
  a.output_max = output_max;
  a.residual = residual;
  a.residual_stride = out_channels;
  function(a);
}

bool F32InvertedResidual::init(const F32PointwiseConv& expand,
                               std::shared_ptr<const F32DwConv> depthwise,
                               const F32PointwiseConv& project,
                               bool residual,
                               Isa isa) {
  const HostLoops loops = host_loops(isa);
  pointwise_ = loops.pointwise;
  if (depthwise == nullptr || pointwise_ == nullptr ||
      !F32DwConv::available(isa) || expand.filter == nullptr ||
      project.filter == nullptr || expand.in_channels == 0 ||
      project.out_channels == 0) {
    return false;
  }
  const F32DwConvShape& d = depthwise->shape();
  if (d.channels != expand.out_channels || project.in_channels != d.channels ||
      (residual && (d.stride_h != 1 || d.stride_w != 1 ||
                    project.out_channels != expand.in_channels))) {
    return false;
  }
  expand_.pack(expand, loops.pointwise_block);
  project_.pack(project, loops.pointwise_block);
  depthwise_ = std::move(depthwise);
  residual_ = residual;
  isa_ = isa;
  return true;
}

bool F32InvertedResidual::pays(size_t in_h,
                               size_t in_w,
                               size_t expanded_channels) {
  return in_h * in_w * expanded_channels * sizeof(float) > kL2Bytes;
}

void F32InvertedResidual::run_band(void* context, size_t index) {
  const Task& task = *static_cast<const Task*>(context);
  const size_t image = index / task.bands;
  const size_t band = index % task.bands;
  const size_t oy0 = task.out_h * band / task.bands;
  const size_t oy1 = task.out_h * (band + 1) / task.bands;
  if (oy0 < oy1) {
    task.block->band(task, image, oy0, oy1);
  }
}

void F32InvertedResidual::band(const Task& task,
                               size_t image,
                               size_t oy0,
                               size_t oy1) const {
  const size_t in_c = expand_.in_channels;
  const size_t mid_c = expand_.out_channels;
  const size_t out_c = project_.out_channels;
  const size_t stride_h = depthwise_->shape().stride_h;
  const size_t pad_top = depthwise_->shape().pad_top;
  const size_t in_h = task.in_h, in_w = task.in_w, out_w = task.out_w;

  // A chunk of `chunk` output rows reads at most (chunk - 1) * stride_h + 3
  // input rows, so a ring of chunk * stride_h + 2 holds them: a row is
  // overwritten only by one ring_rows further down, past what the chunk
  // reading it needs.
  const size_t chunk = std::max<size_t>(1, kChunkPixels / out_w);
  const size_t ring_rows = chunk * stride_h + 2;
  const size_t row_floats = in_w * mid_c;
  const size_t ring_bytes =
      round_up(ring_rows * row_floats * sizeof(float), 64);
  char* scratch = static_cast<char*>(kernels::optimized::thread_scratch(
      ring_bytes + chunk * out_w * mid_c * sizeof(float)));
  if (scratch == nullptr) {
    *task.failed = true;
    return;
  }
  auto* ring = reinterpret_cast<float*>(scratch);
  auto* mid = reinterpret_cast<float*>(scratch + ring_bytes);

  const float* in = task.in + image * in_h * in_w * in_c;
  float* out = task.out + image * task.out_h * out_w * out_c;
  // Input row iy of the image, as the depthwise kernel row reading it
  // finds it: above or below the image (wrapped past in_h), padding.
  const auto input_row = [&](size_t oy, size_t ky) -> const float* {
    const size_t iy = oy * stride_h + ky - pad_top;
    return iy < in_h ? ring + iy % ring_rows * row_floats : nullptr;
  };
  // Rows [0, expanded) of the image have been expanded into the ring.
  size_t expanded = 0;
  for (size_t c0 = oy0; c0 < oy1; c0 += chunk) {
    const size_t c1 = std::min(oy1, c0 + chunk);
    // The chunk reads input rows [first, end), clipped to the image.
    const size_t first = c0 * stride_h >= pad_top ? c0 * stride_h - pad_top : 0;
    const size_t last = (c1 - 1) * stride_h + 3;
    const size_t end = last > pad_top ? std::min(in_h, last - pad_top) : 0;
    for (size_t iy = std::max(first, expanded); iy < end;) {
      // The rows up to the ring's end, in one pass.
      const size_t slot = iy % ring_rows;
      const size_t rows = std::min(end - iy, ring_rows - slot);
      expand_.run(in + iy * in_w * in_c,
                  rows * in_w,
                  ring + slot * row_floats,
                  nullptr,
                  pointwise_);
      iy += rows;
      expanded = iy;
    }
    for (size_t oy = c0; oy < c1; ++oy) {
      const float* rows[3] = {
          input_row(oy, 0), input_row(oy, 1), input_row(oy, 2)};
      depthwise_->run_row(
          rows, in_w, mid + (oy - c0) * out_w * mid_c, out_w, isa_);
    }
    // With a residual (stride 1, out_c == in_c) output pixel p is input
    // pixel p.
    project_.run(mid,
                 (c1 - c0) * out_w,
                 out + c0 * out_w * out_c,
                 residual_ ? in + c0 * out_w * in_c : nullptr,
                 pointwise_);
  }
}

bool F32InvertedResidual::run(const float* in,
                              size_t batch,
                              size_t in_h,
                              size_t in_w,
                              float* out,
                              size_t out_h,
                              size_t out_w,
                              pthreadpool_t pool) const {
  if (batch == 0 || out_h == 0 || out_w == 0) {
    return true;
  }
  const size_t threads =
      pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
  std::atomic<bool> failed{false};
  Task task{this,
            in,
            in_h,
            in_w,
            out,
            out_h,
            out_w,
            std::min(threads, out_h),
            &failed};
  pthreadpool_parallelize_1d(
      pool, &F32InvertedResidual::run_band, &task, batch * task.bands, 0);
  return !failed;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch

#endif // EXECUTORCH_XNNPACK_OPTIMIZED_HOST
