// The rows of attention_f32 for one instruction set. The build compiles
// this file once per instruction set (as kernels/optimized does its SIMD
// code), each copy in a namespace of its own (ET_OPT_ISA_NAMESPACE);
// attention_f32.cpp picks the one the CPU runs.
//
// Query rows are taken up to four at a time (a tile: consecutive rows of
// one head, so every key and value loaded serves all of them; decode has
// one). Keys are taken kBlock at a time; their scores (dot products over
// head_dim) go to a small array on the stack, their exponentials are taken
// together, and each output row, which accumulates the weighted values, is
// rescaled only when a block raises its running maximum (online softmax).

#include <executorch/extension/llm/custom_ops/attention_f32_simd.h>

#include <executorch/kernels/optimized/simd/vec.h>
#include <executorch/kernels/optimized/simd/vec_math.h>
#include <algorithm>
#include <cmath>

namespace executorch {
namespace extension {
namespace llm {
namespace ET_OPT_ISA_NAMESPACE {

namespace {

namespace simd = ::executorch::kernels::optimized::simd;
using simd::kLanes;
using simd::Vec;

constexpr int64_t kBlock = 32; // a multiple of every kLanes

// scores[r] = q[r] . k over n values, for NR query rows at once (each
// load of k serves every row).
template <int NR>
void dot_rows(const float* const* q, const float* k, int64_t n, float* scores) {
  Vec acc[NR] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec kv = simd::load(k + i);
    for (int r = 0; r < NR; ++r) {
      acc[r] += simd::load(q[r] + i) * kv;
    }
  }
  if (i < n) {
    const Vec kv = simd::load_partial(k + i, n - i);
    for (int r = 0; r < NR; ++r) {
      acc[r] += simd::load_partial(q[r] + i, n - i) * kv;
    }
  }
  for (int r = 0; r < NR; ++r) {
    scores[r] = simd::reduce_add(acc[r]);
  }
}

// o[r] += w[r] * x for NR rows (each load of x serves every row).
template <int NR>
void axpy_rows(float* const* o, const float* w, const float* x, int64_t n) {
  Vec wv[NR];
  for (int r = 0; r < NR; ++r) {
    wv[r] = simd::broadcast(w[r]);
  }
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec xv = simd::load(x + i);
    for (int r = 0; r < NR; ++r) {
      simd::store(o[r] + i, simd::load(o[r] + i) + wv[r] * xv);
    }
  }
  if (i < n) {
    const Vec xv = simd::load_partial(x + i, n - i);
    for (int r = 0; r < NR; ++r) {
      simd::store_partial(
          o[r] + i, simd::load_partial(o[r] + i, n - i) + wv[r] * xv, n - i);
    }
  }
}

// y *= w
void scale(float* y, float w, int64_t n) {
  const Vec wv = simd::broadcast(w);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    simd::store(y + i, simd::load(y + i) * wv);
  }
  if (i < n) {
    simd::store_partial(y + i, simd::load_partial(y + i, n - i) * wv, n - i);
  }
}

// One query row of a tile: where its output accumulates, how many keys it
// sees, its mask row, and its online-softmax state.
struct TileRow {
  const float* q;
  float* o;
  const float* mask;
  int64_t keys;
  float running_max;
  float denominator;
};

// Up to NR query rows of one head (rows s0 .. s0 + NR - 1, fewer at the end
// of the head: the missing ones see no key and write a scratch row), so
// each key and value row loaded serves all of them. Prefill uses NR = 4,
// decode (one row) NR = 1.
template <int NR>
void attention_tile(const AttentionProblem& p,
                    TileRow* rows,
                    const float* key,
                    const float* value,
                    int64_t position_stride) {
  constexpr float kMinusInf = -__builtin_inff();
  const int64_t d = p.head_dim;
  const float* q[NR];
  float* o[NR];
  int64_t tile_keys = 0;
  for (int r = 0; r < NR; ++r) {
    q[r] = rows[r].q;
    o[r] = rows[r].o;
    std::fill(o[r], o[r] + d, 0.0f);
    tile_keys = std::max(tile_keys, rows[r].keys);
  }
  alignas(64) float scores[NR][kBlock];
  float dots[NR];
  float weights[NR];
  for (int64_t j0 = 0; j0 < tile_keys; j0 += kBlock) {
    const int64_t n = std::min(kBlock, tile_keys - j0);
    for (int64_t t = 0; t < n; ++t) {
      const int64_t j = j0 + t;
      dot_rows<NR>(q, key + j * position_stride, d, dots);
      for (int r = 0; r < NR; ++r) {
        scores[r][t] =
            j >= rows[r].keys
                ? kMinusInf
                : dots[r] * p.scale + (rows[r].mask ? rows[r].mask[j] : 0.0f);
      }
    }
    for (int r = 0; r < NR; ++r) {
      TileRow& row = rows[r];
      float* sc = scores[r];
      const float block_max = *std::max_element(sc, sc + n);
      if (block_max == kMinusInf) {
        // Every position of the block is masked for this row.
        std::fill(sc, sc + n, 0.0f);
        continue;
      }
      if (block_max > row.running_max) {
        const float rescale = std::exp(row.running_max - block_max);
        scale(o[r], rescale, d);
        row.denominator *= rescale;
        row.running_max = block_max;
      }
      std::fill(sc + n, sc + kBlock, kMinusInf);
      const Vec m = simd::broadcast(row.running_max);
      Vec sum{};
      for (int64_t t = 0; t < kBlock; t += kLanes) {
        const Vec w = simd::exp(simd::load(sc + t) - m);
        sum += w;
        simd::store(sc + t, w);
      }
      row.denominator += simd::reduce_add(sum);
    }
    for (int64_t t = 0; t < n; ++t) {
      for (int r = 0; r < NR; ++r) {
        weights[r] = scores[r][t];
      }
      axpy_rows<NR>(o, weights, value + (j0 + t) * position_stride, d);
    }
  }
  // A row that sees no position (everything masked) is NaN, as in torch.
  for (int r = 0; r < NR; ++r) {
    const float den = rows[r].denominator;
    scale(o[r], den > 0.0f ? 1.0f / den : __builtin_nanf(""), d);
  }
}

constexpr int kTileRows = 4;

} // namespace

void attention_f32_rows(const AttentionProblem& p,
                        const float* query,
                        const float* key,
                        const float* value,
                        float* out,
                        int64_t row_begin,
                        int64_t row_end) {
  const float* mask = static_cast<const float*>(p.mask);
  const int64_t position_stride = p.kv_heads * p.head_dim;
  // Rows missing from the last tile of a head accumulate here.
  alignas(64) float scratch[kMaxHeadDim];
  int64_t row = row_begin;
  while (row < row_end) {
    const int64_t s0 = row % p.seq_len;
    const int64_t h = (row / p.seq_len) % p.heads;
    const int64_t b = row / (p.seq_len * p.heads);
    // Rows of this head left in the range, at most kTileRows.
    const int64_t count = std::min<int64_t>(
        {static_cast<int64_t>(kTileRows), p.seq_len - s0, row_end - row});
    TileRow rows[kTileRows];
    for (int64_t r = 0; r < kTileRows; ++r) {
      const int64_t s = s0 + std::min(r, count - 1);
      const bool real = r < count;
      rows[r] = TileRow{query + p.query_offset(b, s, h),
                        real ? out + p.query_offset(b, s, h) : scratch,
                        mask == nullptr ? nullptr : mask + s * p.kv_len,
                        real ? p.keys_for_row(s) : 0,
                        -__builtin_inff(),
                        0.0f};
    }
    const int64_t start = p.cache_offset(b, 0, p.kv_head_of(h));
    if (count == 1) {
      attention_tile<1>(p, rows, key + start, value + start, position_stride);
    } else {
      attention_tile<kTileRows>(
          p, rows, key + start, value + start, position_stride);
    }
    row += count;
  }
}

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace llm
} // namespace extension
} // namespace executorch
