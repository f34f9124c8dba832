#include <executorch/backends/xnnpack/runtime/f32_dwconv.h>

#include <algorithm>
#include <cstddef>

#include <executorch/backends/xnnpack/runtime/host_loops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

// A tile: one output row, of all its channels when there are at least
// kRowsPerThread rows per thread (the threads' shares then differ by at
// most a row in kRowsPerThread), else of kTileChannels (whole blocks).
constexpr size_t kRowsPerThread = 4;
constexpr size_t kTileChannels = 4 * f32_dw::kBlock;

} // namespace

struct F32DwConv::Task {
  const F32DwConv* conv;
  const float* in;
  size_t in_h, in_w;
  float* out;
  size_t out_h, out_w;
  // Tiles: batch x output rows x channel groups.
  size_t groups;
  f32_dw::RowFunction row;
};

bool F32DwConv::available(Isa isa) {
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
  return host_loops(isa).dw_row != nullptr &&
         kernels::optimized::isa_available(isa);
#else
  return host_loops(isa).dw_row != nullptr && isa == Isa::kPortable;
#endif
}

std::vector<Isa> F32DwConv::available_isas() {
  std::vector<Isa> isas;
  for (Isa isa : {Isa::kPortable, Isa::kAvx2, Isa::kAvx512}) {
    if (available(isa)) {
      isas.push_back(isa);
    }
  }
  return isas;
}

Isa F32DwConv::selected_isa() {
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
  return kernels::optimized::selected_isa();
#else
  return Isa::kPortable;
#endif
}

bool F32DwConv::init(const F32DwConvShape& shape,
                     const float* filter,
                     const float* bias) {
  using f32_dw::kBlock;
  using f32_dw::kBlockFloats;
  using f32_dw::kTaps;
  const size_t channels = shape.channels;
  if (channels == 0 || shape.stride_h == 0 ||
      (shape.stride_w != 1 && shape.stride_w != 2)) {
    return false;
  }
  shape_ = shape;
  blocks_ = (channels + kBlock - 1) / kBlock;
  packed_.assign(blocks_ * kBlockFloats, 0.0f);
  for (size_t c = 0; c < channels; ++c) {
    float* block = packed_.data() + c / kBlock * kBlockFloats + c % kBlock;
    for (size_t t = 0; t < kTaps; ++t) {
      block[t * kBlock] = filter[t * channels + c];
    }
    block[kTaps * kBlock] = bias != nullptr ? bias[c] : 0.0f;
  }
  return true;
}

void F32DwConv::run_tile(void* context, size_t tile) {
  const Task& task = *static_cast<const Task*>(context);
  const F32DwConvShape& s = task.conv->shape_;
  const size_t group = tile % task.groups;
  const size_t rest = tile / task.groups;
  const size_t oy = rest % task.out_h;
  const size_t b = rest / task.out_h;
  const size_t channels = s.channels;
  const float* image = task.in + b * task.in_h * task.in_w * channels;

  const float* rows[3];
  for (size_t ky = 0; ky < 3; ++ky) {
    // Past in_h (or wrapped around, in the top padding): padding.
    const size_t iy = oy * s.stride_h + ky - s.pad_top;
    rows[ky] = iy < task.in_h ? image + iy * task.in_w * channels : nullptr;
  }
  const size_t group_channels = task.groups == 1 ? channels : kTileChannels;
  const size_t c0 = group * group_channels;
  task.conv->run_channels(
      rows,
      task.in_w,
      task.out + (b * task.out_h + oy) * task.out_w * channels,
      task.out_w,
      c0,
      std::min(channels, c0 + group_channels),
      task.row);
}

void F32DwConv::run_row(const float* const rows[3],
                        size_t in_w,
                        float* out,
                        size_t out_w,
                        Isa isa) const {
  run_channels(
      rows, in_w, out, out_w, 0, shape_.channels, host_loops(isa).dw_row);
}

void F32DwConv::run_channels(const float* const rows[3],
                             size_t in_w,
                             float* out,
                             size_t out_w,
                             size_t c0,
                             size_t c1,
                             f32_dw::RowFunction row) const {
  f32_dw::RowArgs a;
  for (size_t ky = 0; ky < 3; ++ky) {
    a.rows[ky] = rows[ky];
  }
  a.in_w = in_w;
  a.channels = shape_.channels;
  a.stride_w = shape_.stride_w;
  a.pad_left = shape_.pad_left;
  a.out = out;
  a.out_w = out_w;
  a.c0 = c0;
  a.c1 = c1;
  a.packed = packed_.data();
  a.output_min = shape_.output_min;
  a.output_max = shape_.output_max;
  row(a);
}

double F32DwConv::cost_ns(
    size_t batch, size_t in_h, size_t in_w, size_t out_h, size_t out_w) const {
  // Thread CPU time with AVX-512 on an AMD EPYC (f32_dwconv_benchmark):
  // 0.022 ns per multiply-add (3x3 at stride 1 over 576 channels at 14: 29
  // us) and 0.07 ns per input float (the same at stride 2: 13 us); within
  // 25% of each MobileNetV2 layer (under for the largest, which wait on
  // memory).
  const double channels = shape_.channels;
  return double(batch) * channels *
         (double(out_h) * out_w * f32_dw::kTaps * 0.022 +
          double(in_h) * in_w * 0.07);
}

void F32DwConv::run(const float* in,
                    size_t batch,
                    size_t in_h,
                    size_t in_w,
                    float* out,
                    size_t out_h,
                    size_t out_w,
                    pthreadpool_t pool,
                    Isa isa) const {
  if (batch == 0 || out_h == 0 || out_w == 0) {
    return;
  }
  Task task;
  task.conv = this;
  task.in = in;
  task.in_h = in_h;
  task.in_w = in_w;
  task.out = out;
  task.out_h = out_h;
  task.out_w = out_w;
  const size_t threads =
      pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
  task.groups = batch * out_h >= kRowsPerThread * threads
                    ? 1
                    : (shape_.channels + kTileChannels - 1) / kTileChannels;
  task.row = host_loops(isa).dw_row;
  pthreadpool_parallelize_1d(pool,
                             &F32DwConv::run_tile,
                             &task,
                             batch * out_h * task.groups,
                             /*flags=*/0);
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
