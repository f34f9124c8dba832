#include <executorch/backends/xnnpack/runtime/f32_gemm_conv.h>

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>

#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/threadpool_guard.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

namespace opt = kernels::optimized;

namespace {

size_t round_up(size_t x, size_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

} // namespace

struct F32GemmConv::Task {
  const F32GemmConv* conv;
  // The image's im2col matrix, [pixels, depth] with row stride `depth`.
  const float* a;
  size_t a_row_stride;
  float* out; // [pixels, out_channels]
  size_t pixels;
  size_t part_channels;
  // Per share: sgemm scratch of `scratch_bytes`, after each other.
  char* scratch;
  size_t scratch_bytes;
  std::atomic<bool>* failed;
};

bool F32GemmConv::init(const F32GemmConvShape& shape,
                       const float* filter,
                       const float* bias) {
  if (shape.kernel_h == 0 || shape.kernel_w == 0 || shape.stride_h == 0 ||
      shape.stride_w == 0 || shape.dilation_h == 0 || shape.dilation_w == 0 ||
      shape.in_channels == 0 || shape.out_channels == 0 || filter == nullptr) {
    return false;
  }
  shape_ = shape;
  depth_ = shape.kernel_h * shape.kernel_w * shape.in_channels;
  bias_ = bias;
  const auto n = static_cast<int64_t>(shape.out_channels);
  const auto k = static_cast<int64_t>(depth_);
  constexpr size_t kAlignFloats = 16;
  packed_storage_.reset(new (
      std::nothrow) float[opt::sgemm_packed_b_floats(n, k) + kAlignFloats]);
  if (packed_storage_ == nullptr) {
    return false;
  }
  const auto address = reinterpret_cast<uintptr_t>(packed_storage_.get());
  float* packed =
      packed_storage_.get() + (64 - address % 64) % 64 / sizeof(float);
  // B(k, j) is filter row j, element k; of a transposed filter, row k,
  // element j.
  const opt::MatrixView b = shape.filter_transposed
                                ? opt::MatrixView{filter, n, 1}
                                : opt::MatrixView{filter, 1, k};
  opt::sgemm_pack_b(n, k, b, packed);
  packed_ = packed;
  return true;
}

bool F32GemmConv::pointwise() const {
  return shape_.kernel_h == 1 && shape_.kernel_w == 1 && shape_.stride_h == 1 &&
         shape_.stride_w == 1 && shape_.pad_top == 0 && shape_.pad_left == 0;
}

void F32GemmConv::run_part(void* context, size_t part) {
#ifdef ET_USE_THREADPOOL
  // The share is one thread's work: sgemm must not split it again.
  extension::threadpool::NoThreadPoolGuard single_thread;
#endif
  const Task& task = *static_cast<const Task*>(context);
  const F32GemmConvShape& s = task.conv->shape_;
  const size_t first = part * task.part_channels;
  const size_t channels = std::min(task.part_channels, s.out_channels - first);
  const int64_t depth = static_cast<int64_t>(task.conv->depth_);
  opt::GemmEpilogue epilogue;
  if (task.conv->bias_ != nullptr) {
    epilogue.bias = task.conv->bias_ + first;
    epilogue.bias_col_stride = 1;
  }
  epilogue.min = s.output_min;
  epilogue.max = s.output_max;
  if (!opt::sgemm(
          static_cast<int64_t>(task.pixels),
          static_cast<int64_t>(channels),
          depth,
          opt::MatrixView{task.a, static_cast<int64_t>(task.a_row_stride), 1},
          opt::GemmB::packed_of(task.conv->packed_,
                                static_cast<int64_t>(s.out_channels),
                                static_cast<int64_t>(first)),
          task.out + first,
          static_cast<int64_t>(s.out_channels),
          epilogue,
          task.scratch + part * task.scratch_bytes,
          task.scratch_bytes)) {
    *task.failed = true;
  }
}

bool F32GemmConv::run(const float* in,
                      size_t batch,
                      size_t in_h,
                      size_t in_w,
                      float* out,
                      size_t out_h,
                      size_t out_w,
                      pthreadpool_t pool) const {
  const F32GemmConvShape& s = shape_;
  const size_t pixels = out_h * out_w;
  if (batch == 0 || pixels == 0) {
    return true;
  }
  const size_t threads =
      pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
  // Shares start on a panel of the packed filter.
  const size_t part_channels =
      round_up((s.out_channels + threads - 1) / threads,
               static_cast<size_t>(opt::sgemm_panel_columns()));
  const size_t parts = (s.out_channels + part_channels - 1) / part_channels;
  const size_t scratch_bytes =
      round_up(opt::sgemm_scratch_bytes(static_cast<int64_t>(pixels),
                                        static_cast<int64_t>(part_channels),
                                        static_cast<int64_t>(depth_)),
               64);
  const bool in_place = pointwise();
  const size_t im2col_bytes =
      in_place ? 0 : round_up(pixels * depth_ * sizeof(float), 64);
  // One block of the calling thread's scratch: the im2col matrix, then
  // each share's sgemm scratch (the calling thread runs a share too, and
  // its scratch must not move under the matrix).
  char* scratch = static_cast<char*>(
      opt::thread_scratch(im2col_bytes + parts * scratch_bytes));
  if (scratch == nullptr) {
    return false;
  }
  auto* im2col = reinterpret_cast<float*>(scratch);
  const size_t in_c = s.in_channels;
  const size_t run_bytes = in_c * sizeof(float);
  std::atomic<bool> failed{false};
  for (size_t b = 0; b < batch; ++b) {
    const float* image = in + b * in_h * in_w * in_c;
    if (!in_place) {
      // Row p = (oy, ox) holds, per tap (ky, kx), the input pixel's
      // channels, or zeros where the tap is in the padding.
      float* row = im2col;
      for (size_t oy = 0; oy < out_h; ++oy) {
        for (size_t ox = 0; ox < out_w; ++ox) {
          for (size_t ky = 0; ky < s.kernel_h; ++ky) {
            // Above or below the image: wraps past in_h.
            const size_t iy = oy * s.stride_h + ky * s.dilation_h - s.pad_top;
            for (size_t kx = 0; kx < s.kernel_w; ++kx) {
              const size_t ix =
                  ox * s.stride_w + kx * s.dilation_w - s.pad_left;
              if (iy < in_h && ix < in_w) {
                std::memcpy(row, image + (iy * in_w + ix) * in_c, run_bytes);
              } else {
                std::memset(row, 0, run_bytes);
              }
              row += in_c;
            }
          }
        }
      }
    }
    Task task;
    task.conv = this;
    task.a = in_place ? image : im2col;
    task.a_row_stride = in_place ? in_c : depth_;
    task.out = out + b * pixels * s.out_channels;
    task.pixels = pixels;
    task.part_channels = part_channels;
    task.scratch = scratch + im2col_bytes;
    task.scratch_bytes = scratch_bytes;
    task.failed = &failed;
    pthreadpool_parallelize_1d(
        parts > 1 ? pool : nullptr, &run_part, &task, parts, /*flags=*/0);
  }
  return !failed;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch

#endif // EXECUTORCH_XNNPACK_OPTIMIZED_HOST
