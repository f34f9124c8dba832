// The fp32 depthwise 3x3 convolution's row loop (f32_dwconv_rows.h), built
// once per instruction set.
//
// Per block of kLanes channels, the 9 weight vectors, the bias and the clamp
// bounds stay in registers while the row is computed in strips of up to
// kMaxStrip output columns: a strip loads each input vector of its window
// once, for every tap that reads it (stride 1, N columns: 3 (N + 2) loads
// for 9 N multiply-adds). Strips whose window crosses the left or right
// edge skip the padding's columns; a padding row is a null row pointer.
// Each output adds its taps in row-major order to the bias.

#include <executorch/backends/xnnpack/runtime/simd/f32_dwconv_rows.h>

#include <cstdint>

#include <executorch/backends/xnnpack/runtime/simd/partial.h>
#include <executorch/kernels/optimized/simd/vec.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace f32_dw {
inline namespace ET_OPT_ISA_NAMESPACE {
namespace {

namespace simd = kernels::optimized::simd;
using simd::kLanes;
using simd::Vec;

static_assert(kBlock % kLanes == 0, "a block holds whole vectors");

// Output columns per strip: N accumulators, 9 weights, the bias, the clamp
// bounds and the loaded input fit AVX-512's 32 registers with 8, the 16 of
// AVX2 and SSE2 / NEON with 4.
constexpr int kMaxStrip = kLanes >= 16 ? 8 : 4;

#define ET_DW_INLINE inline __attribute__((always_inline))

// What a block's strips share: its registers and the row's geometry.
struct Block {
  Vec w[kTaps];
  Vec bias, lo, hi;
  // Channel c of the block's first lane; lanes valid (kLanes unless the
  // block is the last, partial one).
  size_t c, lanes;
};

// Output columns [ox0, ox0 + N) of stride S. kEdge: the window crosses the
// left or right edge (padding columns are skipped). kTail: a partial block.
template <int N, int S, bool kEdge, bool kTail>
ET_DW_INLINE void strip(const RowArgs& a, const Block& k, size_t ox0) {
  constexpr int kColumns = (N - 1) * S + 3;
  const size_t channels = a.channels;
  const ptrdiff_t ix0 =
      static_cast<ptrdiff_t>(ox0 * S) - static_cast<ptrdiff_t>(a.pad_left);
  Vec acc[N];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    acc[i] = k.bias;
  }
#pragma GCC unroll 3
  for (int ky = 0; ky < 3; ++ky) {
    const float* row = a.rows[ky];
    if (row == nullptr) {
      continue;
    }
#pragma GCC unroll 32
    for (int j = 0; j < kColumns; ++j) {
      const ptrdiff_t ix = ix0 + j;
      if (kEdge && (ix < 0 || ix >= static_cast<ptrdiff_t>(a.in_w))) {
        continue;
      }
      const float* p = row + static_cast<size_t>(ix) * channels + k.c;
      const Vec v = kTail ? load_first(p, k.lanes) : simd::load(p);
#pragma GCC unroll 8
      for (int i = 0; i < N; ++i) {
        const int kx = j - i * S;
        if (kx >= 0 && kx < 3) {
          acc[i] += k.w[ky * 3 + kx] * v;
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    Vec v = acc[i] < k.lo ? k.lo : acc[i];
    v = v > k.hi ? k.hi : v;
    float* out = a.out + (ox0 + i) * channels + k.c;
    if (kTail) {
      store_first(out, v, k.lanes);
    } else {
      simd::store(out, v);
    }
  }
}

template <int N, int S, bool kTail>
ET_DW_INLINE void strip_of(const RowArgs& a,
                           const Block& k,
                           size_t ox,
                           bool edge) {
  if (edge) {
    strip<N, S, true, kTail>(a, k, ox);
  } else {
    strip<N, S, false, kTail>(a, k, ox);
  }
}

template <int S, bool kTail>
void block(const RowArgs& a, size_t c) {
  Block k;
  const float* packed = a.packed + c / kBlock * kBlockFloats + c % kBlock;
  for (size_t t = 0; t < kTaps; ++t) {
    k.w[t] = simd::load(packed + t * kBlock);
  }
  k.bias = simd::load(packed + kTaps * kBlock);
  k.lo = simd::broadcast(a.output_min);
  k.hi = simd::broadcast(a.output_max);
  k.c = c;
  k.lanes = kTail ? a.c1 - c : kLanes;
  // Columns [inside_begin, inside_end) read no padding.
  const size_t inside_begin = (a.pad_left + S - 1) / S;
  const size_t inside_end =
      a.in_w + a.pad_left >= 2 ? (a.in_w + a.pad_left - 2 + S - 1) / S : 0;
  size_t ox = 0;
  while (ox < a.out_w) {
    const size_t left = a.out_w - ox;
    const size_t n = left >= size_t(kMaxStrip) ? kMaxStrip
                     : left >= 4               ? 4
                     : left >= 2               ? 2
                                               : 1;
    const bool edge = ox < inside_begin || ox + n > inside_end;
    switch (n) {
      case 8:
        if constexpr (kMaxStrip >= 8) {
          strip_of<8, S, kTail>(a, k, ox, edge);
        }
        break;
      case 4:
        strip_of<4, S, kTail>(a, k, ox, edge);
        break;
      case 2:
        strip_of<2, S, kTail>(a, k, ox, edge);
        break;
      default:
        strip_of<1, S, kTail>(a, k, ox, edge);
        break;
    }
    ox += n;
  }
}

template <int S>
void row_of_stride(const RowArgs& a) {
  for (size_t c = a.c0; c < a.c1; c += kLanes) {
    if (a.c1 - c >= size_t(kLanes)) {
      block<S, false>(a, c);
    } else {
      block<S, true>(a, c);
    }
  }
}

void row(const RowArgs& a) {
  if (a.stride_w == 1) {
    row_of_stride<1>(a);
  } else {
    row_of_stride<2>(a);
  }
}

} // namespace
} // namespace ET_OPT_ISA_NAMESPACE

#define ET_DW_CONCAT_(a, b) a##b
#define ET_DW_CONCAT(a, b) ET_DW_CONCAT_(a, b)

// row_portable, row_avx2, row_avx512: what row_function() returns.
void ET_DW_CONCAT(row_, ET_OPT_ISA_NAMESPACE)(const RowArgs& a) {
  row(a);
}
} // namespace f32_dw
} // namespace xnnpack
} // namespace backends
} // namespace executorch
