#include <executorch/kernels/quantized/cpu/quantized_linear_vnni.h>

#if defined(__x86_64__)

#include <executorch/kernels/quantized/cpu/dpbusd.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <utility>

// Functions compiled for AVX-512 VNNI whatever the build's -march; only
// called after best_isa() checked the CPU.
#define ET_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

// GCC 12 warns about the undefined vectors inside its own AVX-512
// intrinsics' headers (_mm512_reduce_add_ps; a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace torch {
namespace executor {
namespace native {
namespace quantized {
namespace vnni {

namespace {

constexpr int64_t kLanes = 16; // int32 lanes of a vector: a panel's features
// Fewer input rows than this run the GEMV, which streams each weight
// vector once for all of them.
constexpr int64_t kGemmMinRows = 4;

// The stored weights (quantized_linear.h's panel layout): a "word" is the
// 4 bytes of one feature holding `unit` consecutive values (4 of 8 bits,
// 8 of 4 bits); vpdpbusd multiplies a vector of 16 features' words by one
// broadcast word of an input row, which is read in place.
struct Geometry {
  bool four_bit;
  int64_t unit;
  int64_t units; // words per feature
  int64_t groups;
  int64_t units_per_group;
};

Geometry geometry_of(const PackedWeights& w) {
  Geometry g;
  g.four_bit = w.bits == 4;
  g.unit = g.four_bit ? 8 : 4;
  g.units = w.cols / g.unit;
  g.groups = w.cols / w.group_size;
  g.units_per_group = w.group_size / g.unit;
  return g;
}

size_t round_up(size_t bytes) {
  return (bytes + 63) / 64 * 64;
}

// How far ahead of its reads the GEMV prefetches weights: far enough to
// cover memory's latency on a decode, whose weights stream from DRAM
// (4 KB and 8 KB were 20-25% faster than one tile ahead, 1.5 KB for a
// 768-wide 4-bit row, on the 8da4w decode linears; thread CPU time).
constexpr int64_t kPrefetchBytes = 8192;

// The lanes of a 16-float vector that hold elements when `remaining` are
// left: all of them, or the first `remaining` at the end of an array.
inline __mmask16 lanes_left(int64_t remaining) {
  return remaining >= kLanes ? static_cast<__mmask16>(0xFFFF)
                             : static_cast<__mmask16>((1u << remaining) - 1);
}

// Whether the n scales at `scales` are finite and > 0 and the n 4-bit
// zero points at `zero_points` (if not null) within [-8, 7].
ET_VNNI bool tables_valid(const float* scales,
                          const int8_t* zero_points,
                          int64_t n) {
  const __m512 largest = _mm512_set1_ps(std::numeric_limits<float>::max());
  const __m512i zp_min = _mm512_set1_epi8(-8);
  const __m512i zp_max = _mm512_set1_epi8(7);
  __mmask16 bad = 0;
  __mmask64 bad_zp = 0;
  for (int64_t i = 0; i < n; i += kLanes) {
    const __mmask16 mask = lanes_left(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(mask, scales + i);
    // NaN fails both comparisons.
    bad |= mask & ~(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ) &
                    _mm512_cmp_ps_mask(v, largest, _CMP_LE_OQ));
  }
  if (zero_points != nullptr) {
    for (int64_t i = 0; i < n; i += 64) {
      const __mmask64 mask =
          n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
      const __m512i v = _mm512_maskz_loadu_epi8(mask, zero_points + i);
      bad_zp |= _mm512_mask_cmp_epi8_mask(mask, v, zp_min, _MM_CMPINT_LT) |
                _mm512_mask_cmp_epi8_mask(mask, v, zp_max, _MM_CMPINT_NLE);
    }
  }
  return bad == 0 && bad_zp == 0;
}

// The scratch: each input row's sums of (xq - x_zp) per group; the last
// panel, when it holds fewer than 16 features, copied into a full one
// (the kernels load whole vectors, and a masked load in the GEMM's loop
// made GCC keep its accumulators in memory, 2.2x slower); then, for the
// GEMM, per thread the parameters of its two panels.
struct Scratch {
  int32_t* group_sums; // [rows_x, groups]
  uint8_t* last_panel; // [units, 16 lanes, 4 bytes], if N % 16 != 0
  int32_t* params;     // [slices][2 panels][groups] of kParamsWords

  // Per group of a panel: the sums of its features' stored values over the
  // group, their c (8 or 128 plus the zero point) and scales.
  static constexpr int64_t kParamsWords = 3 * kLanes;

  struct Sizes {
    size_t group_sums, last_panel, params;
  };

  static Sizes sizes(const Geometry& g,
                     const PackedWeights& w,
                     int64_t rows_x) {
    return {round_up(rows_x * g.groups * sizeof(int32_t)),
            w.rows % kLanes != 0 ? round_up(g.units * kLanes * 4) : 0,
            rows_x >= kGemmMinRows ? 2 * g.groups * kParamsWords *
                                         sizeof(int32_t) * scratch_slices()
                                   : 0};
  }

  Scratch(const Geometry& g,
          const PackedWeights& w,
          int64_t rows_x,
          void* memory) {
    const Sizes s = sizes(g, w, rows_x);
    char* p = static_cast<char*>(memory);
    group_sums = reinterpret_cast<int32_t*>(p);
    last_panel = reinterpret_cast<uint8_t*>(p += s.group_sums);
    params = reinterpret_cast<int32_t*>(p += s.last_panel);
  }
};

// One panel of the stored weights: word u of feature n0 + l is the 4
// bytes at data + u * 64 + 4 l, for the lanes in `mask` (16, or the
// features left in the last panel, which is read from the scratch's copy).
struct Panel {
  const uint8_t* data;
  __mmask16 mask;
};

Panel panel_at(const Geometry& g,
               const PackedWeights& w,
               const Scratch& s,
               int64_t n0) {
  const int64_t lanes = std::min(kLanes, w.rows - n0);
  return {lanes == kLanes ? w.data + n0 * g.units * 4 : s.last_panel,
          lanes_left(lanes)};
}

// Copies the last panel into the scratch with its missing lanes 0, when
// it is not full.
void copy_last_panel(const Geometry& g, const PackedWeights& w, Scratch& s) {
  const int64_t lanes = w.rows % kLanes;
  if (lanes == 0) {
    return;
  }
  const uint8_t* from = w.data + (w.rows - lanes) * g.units * 4;
  std::memset(s.last_panel, 0, g.units * kLanes * 4);
  for (int64_t u = 0; u < g.units; ++u) {
    std::memcpy(s.last_panel + u * kLanes * 4, from + u * lanes * 4, lanes * 4);
  }
}

ET_VNNI inline __m512i load_words(const Panel& p, int64_t u) {
  return _mm512_loadu_si512(p.data + u * kLanes * 4);
}

// The low nibbles of a vector of 4-bit words (their first four values),
// then the high ones (the last four), as bytes 0..15.
ET_VNNI inline __m512i low_nibbles(__m512i v) {
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}
ET_VNNI inline __m512i high_nibbles(__m512i v) {
  return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
}

ET_VNNI inline __m512i broadcast_word(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// group_sums[m, grp] = sum over the group of (xq[m, k] - x_zp[m]).
ET_VNNI void sum_groups(const Geometry& g,
                        const PackedWeights& w,
                        const QuantizedRows& x,
                        int32_t* group_sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t m = 0; m < x.rows; ++m) {
    const int8_t* q = x.values + m * w.cols;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const int64_t end = (grp + 1) * w.group_size;
      __m512i sums = _mm512_setzero_si512();
      for (int64_t k = grp * w.group_size; k < end; k += 64) {
        const int64_t left = end - k;
        const __mmask64 mask =
            left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
        sums = _mm512_dpbusd_epi32(
            sums, ones, _mm512_maskz_loadu_epi8(mask, q + k));
      }
      group_sums[m * g.groups + grp] =
          _mm512_reduce_add_epi32(sums) -
          static_cast<int32_t>(w.group_size) * x.zero_points[m];
    }
  }
}

// c (8 or 128 plus the zero point) and the scale of each feature of the
// panel at n0 for group grp: loads when the weights have one group per
// row (their tables run along the features), otherwise a gather.
ET_VNNI inline void group_params(const Geometry& g,
                                 const PackedWeights& w,
                                 int64_t n0,
                                 __mmask16 mask,
                                 int64_t grp,
                                 __m512i* c,
                                 __m512* scale) {
  __m512i zp = _mm512_setzero_si512();
  if (g.groups == 1) {
    *scale = _mm512_maskz_loadu_ps(mask, w.scales + n0);
    if (w.zero_points != nullptr) {
      zp = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, w.zero_points + n0));
    }
  } else {
    const __m512i index = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(static_cast<int32_t>(g.groups)));
    *scale = _mm512_mask_i32gather_ps(
        _mm512_setzero_ps(), mask, index, w.scales + n0 * g.groups + grp, 4);
    if (w.zero_points != nullptr) {
      alignas(64) int32_t zps[kLanes] = {};
      for (int64_t l = 0; l < kLanes && n0 + l < w.rows; ++l) {
        zps[l] = w.zero_points[(n0 + l) * g.groups + grp];
      }
      zp = _mm512_load_si512(zps);
    }
  }
  *c = _mm512_add_epi32(_mm512_set1_epi32(g.four_bit ? 8 : 128), zp);
}

// acc[r] += the products of word u of the panel's features with input
// row r's values of that word; wsum += the stored values' sums.
template <int kRows, bool kFourBit>
ET_VNNI __attribute__((always_inline)) inline void gemv_word(
    const Panel& p,
    const QuantizedRows& x,
    int64_t cols,
    int64_t u,
    __m512i (&acc)[kRows],
    __m512i& wsum) {
  // Panels follow each other: one sequential stream of the weights.
  _mm_prefetch(
      reinterpret_cast<const char*>(p.data + u * kLanes * 4 + kPrefetchBytes),
      _MM_HINT_T0);
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i v = load_words(p, u);
  if constexpr (kFourBit) {
    const __m512i low = low_nibbles(v);
    const __m512i high = high_nibbles(v);
    for (int r = 0; r < kRows; ++r) {
      const int8_t* word = x.values + r * cols + u * 8;
      acc[r] = _mm512_dpbusd_epi32(acc[r], low, broadcast_word(word));
      acc[r] = _mm512_dpbusd_epi32(acc[r], high, broadcast_word(word + 4));
    }
    wsum = _mm512_dpbusd_epi32(wsum, _mm512_add_epi8(low, high), ones);
  } else {
    for (int r = 0; r < kRows; ++r) {
      acc[r] = _mm512_dpbusd_epi32(
          acc[r], v, broadcast_word(x.values + r * cols + u * 4));
    }
    wsum = _mm512_dpbusd_epi32(wsum, v, ones);
  }
}

// y[r, n0 + l] for every input row r (kRows < kGemmMinRows) and feature l
// of the panel at n0: each weight vector is loaded once for all rows, the
// group's words in two interleaved chains of sums. Per group and lane,
//   sum (xq - x_zp)(wq - c) = sum xq wq - x_zp sum wq - c sum (xq - x_zp).
// First checks the panel's scales (finite, > 0) and 4-bit zero points
// (within [-8, 7]), which lie side by side in the tables: false if one is
// invalid.
template <int kRows, bool kFourBit>
ET_VNNI bool gemv_panel(const Geometry& g,
                        const PackedWeights& w,
                        const QuantizedRows& x,
                        const Scratch& s,
                        const float* bias,
                        float* y,
                        int64_t n0) {
  const Panel p = panel_at(g, w, s, n0);
  const int64_t lanes = std::min(kLanes, w.rows - n0);
  const int32_t* group_sums = s.group_sums;
  if (!tables_valid(w.scales + n0 * g.groups,
                    kFourBit && w.zero_points != nullptr
                        ? w.zero_points + n0 * g.groups
                        : nullptr,
                    lanes * g.groups)) {
    return false;
  }
  __m512 total[kRows];
  for (int r = 0; r < kRows; ++r) {
    total[r] = _mm512_setzero_ps();
  }
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    __m512i acc[2][kRows], wsum[2];
    for (int i = 0; i < 2; ++i) {
      wsum[i] = _mm512_setzero_si512();
      for (int r = 0; r < kRows; ++r) {
        acc[i][r] = _mm512_setzero_si512();
      }
    }
    const int64_t first = grp * g.units_per_group;
    const int64_t last = first + g.units_per_group;
    int64_t u = first;
    for (; u + 1 < last; u += 2) {
      gemv_word<kRows, kFourBit>(p, x, w.cols, u, acc[0], wsum[0]);
      gemv_word<kRows, kFourBit>(p, x, w.cols, u + 1, acc[1], wsum[1]);
    }
    if (u < last) {
      gemv_word<kRows, kFourBit>(p, x, w.cols, u, acc[0], wsum[0]);
    }
    __m512i c;
    __m512 scale;
    group_params(g, w, n0, p.mask, grp, &c, &scale);
    const __m512i weight_sums = _mm512_add_epi32(wsum[0], wsum[1]);
    for (int r = 0; r < kRows; ++r) {
      __m512i exact = _mm512_add_epi32(acc[0][r], acc[1][r]);
      exact = _mm512_sub_epi32(
          exact,
          _mm512_mullo_epi32(weight_sums, _mm512_set1_epi32(x.zero_points[r])));
      exact = _mm512_sub_epi32(
          exact,
          _mm512_mullo_epi32(
              c, _mm512_set1_epi32(group_sums[r * g.groups + grp])));
      total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), scale, total[r]);
    }
  }
  const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(p.mask, bias + n0)
                                   : _mm512_setzero_ps();
  for (int r = 0; r < kRows; ++r) {
    _mm512_mask_storeu_ps(
        y + r * w.rows + n0,
        p.mask,
        _mm512_fmadd_ps(total[r], _mm512_set1_ps(x.scales[r]), b));
  }
  return true;
}

using GemvFn = bool (*)(const Geometry&,
                        const PackedWeights&,
                        const QuantizedRows&,
                        const Scratch&,
                        const float*,
                        float*,
                        int64_t);

template <bool kFourBit, size_t... kRows>
constexpr std::array<GemvFn, sizeof...(kRows)> gemvs_of(
    std::index_sequence<kRows...>) {
  return {gemv_panel<static_cast<int>(kRows) + 1, kFourBit>...};
}

// kGemvs<four_bit>[rows - 1]: the GEMV for `rows` input rows.
template <bool kFourBit>
constexpr auto kGemvs =
    gemvs_of<kFourBit>(std::make_index_sequence<kGemmMinRows - 1>());

// The GEMM's parameters of the panel at n0 (Scratch::kParamsWords per
// group): its weight sums, c and scales.
ET_VNNI void panel_params(const Geometry& g,
                          const PackedWeights& w,
                          const Panel& p,
                          int64_t n0,
                          int32_t* params) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    __m512i sums = _mm512_setzero_si512();
    for (int64_t u = grp * g.units_per_group; u < (grp + 1) * g.units_per_group;
         ++u) {
      __m512i v = load_words(p, u);
      if (g.four_bit) {
        v = _mm512_add_epi8(low_nibbles(v), high_nibbles(v));
      }
      sums = _mm512_dpbusd_epi32(sums, v, ones);
    }
    int32_t* entry = params + grp * Scratch::kParamsWords;
    __m512i c;
    __m512 scale;
    group_params(g, w, n0, p.mask, grp, &c, &scale);
    _mm512_storeu_si512(entry, sums);
    _mm512_storeu_si512(entry + kLanes, c);
    _mm512_storeu_ps(entry + 2 * kLanes, scale);
  }
}

// acc[i][p] += the products of input row i's values of word u with panel
// p's words there, `weights[p]` (4-bit: the low nibbles with the word's
// first four values, the high ones with the last four).
template <int kRows, int kPanels, bool kFourBit>
ET_VNNI __attribute__((always_inline)) inline void multiply_word(
    __m512i (&acc)[kRows][kPanels],
    __m512i (&weights)[kPanels],
    const int8_t* xrows,
    int64_t row_bytes,
    int64_t u) {
  using ::executorch::kernels::vnni::dpbusd;
  if constexpr (kFourBit) {
    __m512i high[kPanels];
    for (int p = 0; p < kPanels; ++p) {
      high[p] = high_nibbles(weights[p]);
      weights[p] = low_nibbles(weights[p]);
    }
    for (int i = 0; i < kRows; ++i) {
      const int8_t* word = xrows + i * row_bytes + u * 8;
      const __m512i first = broadcast_word(word);
      for (int p = 0; p < kPanels; ++p) {
        acc[i][p] = dpbusd(acc[i][p], weights[p], first);
      }
      const __m512i second = broadcast_word(word + 4);
      for (int p = 0; p < kPanels; ++p) {
        acc[i][p] = dpbusd(acc[i][p], high[p], second);
      }
    }
  } else {
    for (int i = 0; i < kRows; ++i) {
      const __m512i words = broadcast_word(xrows + i * row_bytes + u * 4);
      for (int p = 0; p < kPanels; ++p) {
        acc[i][p] = dpbusd(acc[i][p], weights[p], words);
      }
    }
  }
}

// y[m0 + i, n0 + l] for i < kRows, l < count, from kPanels panels side by
// side (count <= 16 kPanels) with their parameters (panel_params): each
// broadcast input word feeds kPanels products, each weight vector kRows.
// With kOneGroup (the weights have one group per row: per-channel int8),
// the integer sums run over the whole row and are scaled once, so the
// registers need not also hold kRows x kPanels float totals and the tile
// takes more rows.
template <int kRows, int kPanels, bool kOneGroup, bool kFourBit>
ET_VNNI void gemm_tile(const Geometry& g,
                       const Scratch& s,
                       const QuantizedRows& x,
                       int64_t m0,
                       const Panel* panels,
                       const int32_t* params,
                       int64_t n0,
                       int64_t count,
                       const float* bias,
                       float* y,
                       int64_t y_stride) {
  const int64_t row_bytes = g.units * g.unit;
  const int8_t* xrows = x.values + m0 * row_bytes;
  const int64_t groups = kOneGroup ? 1 : g.groups;
  const int64_t units_per_group = kOneGroup ? g.units : g.units_per_group;
  __m512 totals[kRows][kPanels];
  for (int i = 0; i < kRows; ++i) {
    for (int p = 0; p < kPanels; ++p) {
      totals[i][p] = _mm512_setzero_ps();
    }
  }
  for (int64_t grp = 0; grp < groups; ++grp) {
    __m512i acc[kRows][kPanels];
    for (int i = 0; i < kRows; ++i) {
      for (int p = 0; p < kPanels; ++p) {
        acc[i][p] = _mm512_setzero_si512();
      }
    }
    const int64_t first = grp * units_per_group;
    for (int64_t u = first; u < first + units_per_group; ++u) {
      __m512i weights[kPanels];
      for (int p = 0; p < kPanels; ++p) {
        weights[p] = load_words(panels[p], u);
      }
      multiply_word<kRows, kPanels, kFourBit>(
          acc, weights, xrows, row_bytes, u);
    }
    for (int p = 0; p < kPanels; ++p) {
      const int32_t* entry =
          params + (p * g.groups + grp) * Scratch::kParamsWords;
      const __m512i weight_sums = _mm512_loadu_si512(entry);
      const __m512i c = _mm512_loadu_si512(entry + kLanes);
      const __m512 scales = _mm512_loadu_ps(entry + 2 * kLanes);
      for (int i = 0; i < kRows; ++i) {
        const int64_t m = m0 + i;
        __m512i exact = _mm512_sub_epi32(
            acc[i][p],
            _mm512_mullo_epi32(weight_sums,
                               _mm512_set1_epi32(x.zero_points[m])));
        exact = _mm512_sub_epi32(
            exact,
            _mm512_mullo_epi32(
                c, _mm512_set1_epi32(s.group_sums[m * g.groups + grp])));
        totals[i][p] =
            _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), scales, totals[i][p]);
      }
    }
  }
  for (int p = 0; p < kPanels; ++p) {
    const int64_t columns = std::min<int64_t>(kLanes, count - p * kLanes);
    const __mmask16 mask = lanes_left(columns);
    const int64_t n = n0 + p * kLanes;
    const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(mask, bias + n)
                                     : _mm512_setzero_ps();
    for (int i = 0; i < kRows; ++i) {
      _mm512_mask_storeu_ps(
          y + (m0 + i) * y_stride + n,
          mask,
          _mm512_fmadd_ps(totals[i][p], _mm512_set1_ps(x.scales[m0 + i]), b));
    }
  }
}

using TileFn = void (*)(const Geometry&,
                        const Scratch&,
                        const QuantizedRows&,
                        int64_t,
                        const Panel*,
                        const int32_t*,
                        int64_t,
                        int64_t,
                        const float*,
                        float*,
                        int64_t);

// Input rows of a tile of `panels` panels, as many as the 32 registers
// hold: rows x panels accumulators, the panels' weight vectors (two per
// panel for 4-bit weights) and a broadcast input word, plus as many float
// totals as accumulators when the weights have several groups per row.
constexpr int tile_rows(bool one_group, int panels) {
  return one_group || panels == 1 ? 8 : 6;
}

template <int kPanels, bool kOneGroup, bool kFourBit, size_t... kRows>
constexpr std::array<TileFn, sizeof...(kRows)> tiles_of(
    std::index_sequence<kRows...>) {
  return {
      gemm_tile<static_cast<int>(kRows) + 1, kPanels, kOneGroup, kFourBit>...};
}

// kTiles<...>[rows - 1]: the tile for `rows` input rows.
template <int kPanels, bool kOneGroup, bool kFourBit>
constexpr auto kTiles = tiles_of<kPanels, kOneGroup, kFourBit>(
    std::make_index_sequence<tile_rows(kOneGroup, kPanels)>());

// The tiles of one or two panels for `w`: 8-bit weights with one group per
// row (per-channel int8) sum whole rows in int32 (kOneGroup); the others
// group by group.
struct Tiles {
  const TileFn* of_panels[2];
  bool one_group;
};

Tiles tiles_for(const Geometry& g) {
  if (g.four_bit) {
    return {{kTiles<1, false, true>.data(), kTiles<2, false, true>.data()},
            false};
  }
  if (g.groups == 1) {
    return {{kTiles<1, true, false>.data(), kTiles<2, true, false>.data()},
            true};
  }
  return {{kTiles<1, false, false>.data(), kTiles<2, false, false>.data()},
          false};
}

} // namespace

bool supports(const PackedWeights& w) {
  const int64_t unit = w.bits == 4 ? 8 : 4;
  return w.cols % unit == 0 && w.group_size % unit == 0;
}

size_t dynamic_scratch_bytes(const PackedWeights& w, int64_t rows_x) {
  const Scratch::Sizes s = Scratch::sizes(geometry_of(w), w, rows_x);
  return s.group_sums + s.last_panel + s.params;
}

bool linear_dynamic(const QuantizedRows& x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    void* scratch) {
  const Geometry g = geometry_of(w);
  Scratch s(g, w, x.rows, scratch);
  sum_groups(g, w, x, s.group_sums);
  copy_last_panel(g, w, s);
  std::atomic<bool> valid{true};
  if (x.rows < kGemmMinRows) {
    const GemvFn gemv = (g.four_bit ? kGemvs<true> : kGemvs<false>)[x.rows - 1];
    const int64_t panels = (w.rows + kLanes - 1) / kLanes;
    split_over_threads(panels,
                       kLanes * w.cols * x.rows,
                       [&](int64_t begin, int64_t end, int64_t) {
                         bool all_valid = true;
                         for (int64_t panel = begin; panel < end; ++panel) {
                           all_valid &=
                               gemv(g, w, x, s, bias, y, panel * kLanes);
                         }
                         if (!all_valid) {
                           valid.store(false, std::memory_order_relaxed);
                         }
                       });
    return valid.load(std::memory_order_relaxed);
  }
  // Pairs of panels: 32 output features multiplied with every input row.
  const Tiles tiles = tiles_for(g);
  const int64_t pairs = (w.rows + 2 * kLanes - 1) / (2 * kLanes);
  split_over_threads(
      pairs,
      2 * kLanes * w.cols * x.rows,
      [&](int64_t begin, int64_t end, int64_t slice) {
        int32_t* params =
            s.params + slice * 2 * g.groups * Scratch::kParamsWords;
        for (int64_t pair = begin; pair < end; ++pair) {
          const int64_t n0 = pair * 2 * kLanes;
          const int64_t count = std::min(2 * kLanes, w.rows - n0);
          if (!weight_rows_valid(w, n0, n0 + count)) {
            valid.store(false, std::memory_order_relaxed);
          }
          const bool wide = count > kLanes;
          const Panel panels[2] = {
              panel_at(g, w, s, n0),
              wide ? panel_at(g, w, s, n0 + kLanes) : Panel{nullptr, 0}};
          panel_params(g, w, panels[0], n0, params);
          if (wide) {
            panel_params(g,
                         w,
                         panels[1],
                         n0 + kLanes,
                         params + g.groups * Scratch::kParamsWords);
          }
          const int64_t tile = tile_rows(tiles.one_group, wide ? 2 : 1);
          for (int64_t m0 = 0; m0 < x.rows; m0 += tile) {
            const int64_t rows = std::min(tile, x.rows - m0);
            tiles.of_panels[wide ? 1 : 0][rows - 1](
                g, s, x, m0, panels, params, n0, count, bias, y, w.rows);
          }
        }
      });
  return valid.load(std::memory_order_relaxed);
}

ET_VNNI bool find_min_max(const float* x, int64_t n, float* lo, float* hi) {
  __m512 low = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  __m512 high = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __mmask16 nan = 0;
  for (int64_t i = 0; i < n; i += kLanes) {
    const __mmask16 mask = lanes_left(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(mask, x + i);
    nan |= _mm512_mask_cmp_ps_mask(mask, v, v, _CMP_UNORD_Q);
    low = _mm512_mask_min_ps(low, mask, low, v);
    high = _mm512_mask_max_ps(high, mask, high, v);
  }
  if (nan != 0) {
    return false;
  }
  *lo = _mm512_reduce_min_ps(low);
  *hi = _mm512_reduce_max_ps(high);
  return true;
}

// round_half_even(v * inverse) + zp clamped to [low, high], in int32 lanes:
// rounded as nearbyint in the default mode, clamped in float (a NaN
// becomes low).
ET_VNNI inline __m512i quantize_vector(
    __m512 v, __m512 inverse, __m512 zp, __m512 low, __m512 high) {
  v = _mm512_roundscale_ps(_mm512_mul_ps(v, inverse),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_cvtps_epi32(
      _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, zp), low), high));
}

// Four vectors at a time, whose 64 results are packed (two saturating
// packs, which keep values already clamped to the int8 range, then one
// permutation) into a single store. With a truncating store per vector
// this was 2.95% of MiniLM's dynamic int8 program, now 2.40% (the same
// program's GEMM 60.3% in both).
ET_VNNI void quantize_int8(const float* x,
                           int64_t n,
                           float inverse_scale,
                           int32_t zero_point,
                           int32_t qmin,
                           int32_t qmax,
                           int8_t* q) {
  const __m512 inverse = _mm512_set1_ps(inverse_scale);
  const __m512 zp = _mm512_set1_ps(static_cast<float>(zero_point));
  const __m512 low = _mm512_set1_ps(static_cast<float>(qmin));
  const __m512 high = _mm512_set1_ps(static_cast<float>(qmax));
  // After the packs, 128-bit lane L holds lanes 4L..4L+3 of the four
  // vectors in turn: 32-bit word k of the result is word (k % 4) * 4 + k / 4.
  const __m512i order =
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const __m512i a =
        quantize_vector(_mm512_loadu_ps(x + i), inverse, zp, low, high);
    const __m512i b = quantize_vector(
        _mm512_loadu_ps(x + i + kLanes), inverse, zp, low, high);
    const __m512i c = quantize_vector(
        _mm512_loadu_ps(x + i + 2 * kLanes), inverse, zp, low, high);
    const __m512i d = quantize_vector(
        _mm512_loadu_ps(x + i + 3 * kLanes), inverse, zp, low, high);
    const __m512i packed =
        _mm512_packs_epi16(_mm512_packs_epi32(a, b), _mm512_packs_epi32(c, d));
    _mm512_storeu_si512(q + i, _mm512_permutexvar_epi32(order, packed));
  }
  for (; i < n; i += kLanes) {
    const __mmask16 mask = lanes_left(n - i);
    _mm512_mask_cvtepi32_storeu_epi8(
        q + i,
        mask,
        quantize_vector(
            _mm512_maskz_loadu_ps(mask, x + i), inverse, zp, low, high));
  }
}

} // namespace vnni
} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch

#endif // __x86_64__
