#pragma once

// Building blocks of the host steps (nodes/*.cpp): splitting work across the
// delegate's pthreadpool when it is large enough to pay for it, an
// elementwise loop, and a strided gather that transposes and slices tensors
// of any element size.

#include <cstddef>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/graph.h>
#include <executorch/kernels/optimized/cpu/grain.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// Work smaller than these runs on the calling thread (a null pool): each
// threshold is about 5 us of its kind of work on one thread, where a split
// starts to pay for its dispatch (~0.5 us to an awake worker): the same
// work as the optimized kernels' grains (kernels/optimized/cpu/grain.h,
// with the measurements).
// Per-element math (softmax, GELU, exp; elements):
inline constexpr size_t kMinParallelElements = kernels::optimized::kMathGrain;
// Layer norm (elements):
inline constexpr size_t kMinParallelNormElements =
    kernels::optimized::kRowNormGrain;
// Transposes, slices, concatenations (bytes moved):
inline constexpr size_t kMinParallelCopyBytes =
    kernels::optimized::kCopyGrainBytes;
// Matrix products (multiply-adds):
inline constexpr size_t kMinParallelMacs = kernels::optimized::kGemmGrainMacs;
// Memory-bound XNNPACK runtimes (elements read and written by adds,
// converts, clamps, ...; compiler.h's runtime_pool): split when a second
// thread gets ~5 us of them at kernels/optimized's kCheapGrain rate (~0.1
// ns per element; XNNPACK's own rates were not measured). MobileNetV2's
// int8 adds and its input's convert move 16K-301K elements.
inline constexpr size_t kMinParallelStreamElements = size_t{1} << 17;
// Work whose thread CPU time on one thread is estimated (ns; the int8
// convolutions' cost_ns, qs8_conv.h): split when a second thread gets at
// least 5 us of it. Every MobileNetV2 int8 convolution but its smallest
// (13-14 us) does.
inline constexpr size_t kMinParallelNs = 10000;

// Elements per task of an elementwise loop: enough to amortize scheduling.
inline constexpr size_t kElementTile = 4096;

inline pthreadpool_t pool_for(size_t work,
                              size_t min_work,
                              pthreadpool_t pool) {
  return work < min_work ? nullptr : pool;
}

// The product of dims[begin, end).
size_t product(const Dims& dims, size_t begin, size_t end);

// Row-major strides (in elements) of `dims`.
void row_major_strides(const Dims& dims, size_t* strides);

// Writes the contiguous tensor `out` of `out_dims` whose element at index
// (i0, ..., ir) is element base + sum(ik * step[k]) of `in`; elements are
// `element_size` bytes. A transpose permutes the input's strides, a slice
// starts at an offset and keeps them. Splits the first output dim larger
// than 1 across `pool`.
void gather(const void* in,
            size_t base,
            const size_t* step,
            const Dims& out_dims,
            size_t element_size,
            void* out,
            pthreadpool_t pool);

// Calls f(start, count) for tiles of `tile` items covering [0, range),
// split across `pool` (null: all on the calling thread).
template <typename F>
void parallelize_tiles(pthreadpool_t pool, size_t range, size_t tile, F& f) {
  pthreadpool_parallelize_1d_tile_1d(
      pool,
      [](void* context, size_t start, size_t count) {
        (*static_cast<F*>(context))(start, count);
      },
      &f,
      range,
      tile,
      /*flags=*/0);
}

// out[i] = F(in[i]) for n floats, in tiles across `pool`.
using UnaryFunction = float (*)(float);
void map_elements(
    UnaryFunction f, const float* in, float* out, size_t n, pthreadpool_t pool);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
