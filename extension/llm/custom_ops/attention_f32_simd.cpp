// The rows of attention_f32 for one instruction set. The build compiles
// this file once per instruction set (as kernels/optimized does its SIMD
// code), each copy in a namespace of its own (ET_OPT_ISA_NAMESPACE);
// attention_f32.cpp picks the one the CPU runs.
//
// Query rows are taken up to four at a time (a tile: consecutive rows of
// one head, or at one row per head, as in decode, the heads that share a
// key/value head; every key and value loaded serves all of them). Keys are
// taken kBlock at a time; their scores (dot products over head_dim) go to a
// small array on the stack, their exponentials are taken together, and each
// output row, which accumulates the weighted values, is rescaled only when a
// block raises its running maximum (online softmax).

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

// Asks for the cache lines of row[0, n) ahead of their use. The cache's
// rows of one key/value head lie position_stride apart, a stream the
// hardware prefetcher follows slowly; at decode the cache is no longer in
// cache (the step's weights streamed through since the last layer), and
// the loads of keys and values were where the attention stalled (perf,
// 8da4w decode of llm_benchmark's Llama).
inline void prefetch_row(const float* row, int64_t n) {
  constexpr int64_t kLineFloats = 64 / sizeof(float);
  for (int64_t i = 0; i < n; i += kLineFloats) {
    __builtin_prefetch(row + i);
  }
}

// How many keys ahead of the one in use the next key row is prefetched
// (its values are prefetched with it, a block before they are used).
constexpr int64_t kKeysAhead = 8;

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

// NR query rows that read the same key/value head (consecutive rows of one
// head, or one row of each head of a group), so each key and value row
// loaded serves all of them. Prefill takes 4 rows of a head at a time
// (fewer at its end), decode the heads of a group.
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
      if (j + kKeysAhead < tile_keys) {
        prefetch_row(key + (j + kKeysAhead) * position_stride, d);
      }
      prefetch_row(value + j * position_stride, d);
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
        const Vec w = simd::exp_nonpositive(simd::load(sc + t) - m);
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

using TileFn = void (*)(
    const AttentionProblem&, TileRow*, const float*, const float*, int64_t);
constexpr TileFn kTiles[kTileRows] = {
    attention_tile<1>, attention_tile<2>, attention_tile<3>, attention_tile<4>};

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
  const int64_t group = p.heads / p.kv_heads;
  int64_t row = row_begin;
  while (row < row_end) {
    const int64_t s0 = row % p.seq_len;
    const int64_t h0 = (row / p.seq_len) % p.heads;
    const int64_t b = row / (p.seq_len * p.heads);
    // A tile: the rows of this head left in the range; with one row per
    // head (decode), the following heads' that read the same key/value
    // head (grouped-query attention), so that their keys and values are
    // loaded once. At most kTileRows either way.
    const bool across_heads = p.seq_len == 1;
    const int64_t left = across_heads ? group - h0 % group : p.seq_len - s0;
    const int64_t count = std::min<int64_t>(
        {static_cast<int64_t>(kTileRows), left, row_end - row});
    TileRow rows[kTileRows];
    for (int64_t r = 0; r < count; ++r) {
      const int64_t s = across_heads ? s0 : s0 + r;
      const int64_t h = across_heads ? h0 + r : h0;
      rows[r] = TileRow{query + p.query_offset(b, s, h),
                        out + p.query_offset(b, s, h),
                        mask == nullptr ? nullptr : mask + s * p.kv_len,
                        p.keys_for_row(s),
                        -__builtin_inff(),
                        0.0f};
    }
    const int64_t start = p.cache_offset(b, 0, p.kv_head_of(h0));
    kTiles[count - 1](p, rows, key + start, value + start, position_stride);
    row += count;
  }
}

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace llm
} // namespace extension
} // namespace executorch
