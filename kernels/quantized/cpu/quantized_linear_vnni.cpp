#include <executorch/kernels/quantized/cpu/quantized_linear_vnni.h>

#if defined(__x86_64__)

#include <executorch/kernels/quantized/cpu/dpbusd.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <numeric>
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

constexpr int64_t kLanes = 16; // int32 lanes of a vector
// Fewer input rows than this run the GEMV: packing a panel costs about
// as much as multiplying it with a few rows.
constexpr int64_t kGemmMinRows = 4;

// Where each input value goes. A "unit" is the values one packed 32-bit
// word of a weight row holds (8 of 4 bits, 4 of 8 bits); a chunk is 16
// units, one 64-byte vector of a weight row. An input row is laid out in
// 4-byte slots matching vpdpbusd's lanes: for 8-bit weights in order; for
// 4-bit ones each chunk holds first the even values of its 16 units (the
// weights' high nibbles), then the odd ones (the low nibbles), so that
// slot c * 32 + l and c * 32 + 16 + l hold unit 16 c + l.
struct Geometry {
  bool four_bit;
  int64_t unit;
  int64_t units;
  int64_t chunks;
  int64_t groups;
  int64_t units_per_group;
  int64_t row_stride;      // bytes of a weight row
  int64_t slots_per_chunk; // 32 or 16
  int64_t row_bytes;       // bytes of an input row in slot order
};

Geometry geometry_of(const PackedWeights& w) {
  Geometry g;
  g.four_bit = w.bits == 4;
  g.unit = g.four_bit ? 8 : 4;
  g.units = w.cols / g.unit;
  g.chunks = (g.units + kLanes - 1) / kLanes;
  g.groups = w.cols / w.group_size;
  g.units_per_group = w.group_size / g.unit;
  g.row_stride = g.four_bit ? w.cols / 2 : w.cols;
  g.slots_per_chunk = g.four_bit ? 2 * kLanes : kLanes;
  g.row_bytes = g.chunks * g.slots_per_chunk * 4;
  return g;
}

int64_t even_slot(const Geometry& g, int64_t u) {
  return (u / kLanes) * g.slots_per_chunk + u % kLanes;
}

size_t round_up(size_t bytes) {
  return (bytes + 63) / 64 * 64;
}

// The scratch: the input rows in slot order, their sums per unit (as
// float, for the GEMV) and per group (for the GEMM), each chunk's groups
// (GEMV), then one GEMM panel per thread.
struct Scratch {
  uint8_t* rows;         // [rows_x, row_bytes]
  int32_t* unit_sums;    // [rows_x, 2, chunks * 16]: sum of (xq - x_zp) per
                         // unit, then the same times -(8 or 128)
  int32_t* group_sums;   // [rows_x, groups]: the same per group
  int32_t* chunk_groups; // [chunks, 32]: group of each lane minus the
                         // chunk's first, then the first, then the count
  uint8_t* panels;       // [slices][2] of panel_bytes
  // The input rows the GEMM reads and the bytes from one to the next: the
  // rows above, or the quantized input itself (gemm_reads_input).
  const uint8_t* gemm_rows;
  int64_t gemm_row_bytes;

  struct Sizes {
    size_t rows, unit_sums, group_sums, chunk_groups, panel;
  };

  // A panel: 16 weight rows in slot order, then per group the rows' sums
  // of stored values, their c (8 or 128 plus zero point) and scales.
  static size_t panel_bytes(const Geometry& g) {
    return round_up(kLanes * g.row_bytes) + g.groups * 3 * 64;
  }

  static Sizes sizes(const Geometry& g, int64_t rows_x) {
    return {round_up(rows_x * g.row_bytes),
            round_up(rows_x * 2 * g.chunks * kLanes * sizeof(int32_t)),
            round_up(rows_x * g.groups * sizeof(int32_t)),
            round_up(g.chunks * 32 * sizeof(int32_t)),
            rows_x >= kGemmMinRows ? 2 * panel_bytes(g) * scratch_slices() : 0};
  }

  Scratch(const Geometry& g, int64_t rows_x, void* memory) {
    const Sizes s = sizes(g, rows_x);
    char* p = static_cast<char*>(memory);
    rows = reinterpret_cast<uint8_t*>(p);
    unit_sums = reinterpret_cast<int32_t*>(p += s.rows);
    group_sums = reinterpret_cast<int32_t*>(p += s.unit_sums);
    chunk_groups = reinterpret_cast<int32_t*>(p += s.group_sums);
    panels = reinterpret_cast<uint8_t*>(p += s.chunk_groups);
    gemm_rows = rows;
    gemm_row_bytes = g.row_bytes;
  }
};

// Whether the GEMM reads the quantized input where it is, and needs only
// its rows' sums: 8-bit weights with one group per row (PT2E's per-channel
// dynamic linears), whose slot order is the input's own order. Copying the
// rows into the scratch with prepare_rows took as long as quantizing them
// (3% of MiniLM's dynamic int8 program).
bool gemm_reads_input(const Geometry& g, const QuantizedRows& x) {
  return !g.four_bit && g.groups == 1 && x.rows >= kGemmMinRows;
}

// group_sums[m] = sum_k (xq[m, k] - x_zp[m]) of each input row, for the
// GEMM of gemm_reads_input.
ET_VNNI void sum_rows(const PackedWeights& w,
                      const QuantizedRows& x,
                      const Scratch& s) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t m = 0; m < x.rows; ++m) {
    const int8_t* q = x.values + m * w.cols;
    __m512i sums = _mm512_setzero_si512();
    for (int64_t k = 0; k < w.cols; k += 64) {
      const int64_t left = w.cols - k;
      const __mmask64 mask =
          left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
      sums =
          _mm512_dpbusd_epi32(sums, ones, _mm512_maskz_loadu_epi8(mask, q + k));
    }
    s.group_sums[m] = _mm512_reduce_add_epi32(sums) -
                      static_cast<int32_t>(w.cols) * x.zero_points[m];
  }
}

// Lays out the input rows in slot order with their sums, a chunk (16
// units) at a time: 8-bit rows are copied; 4-bit ones have each 8-value
// unit split into its even and odd values (a shuffle within 128-bit
// lanes, then a permute of 64-bit pieces across the chunk's two vectors).
ET_VNNI void prepare_rows(const Geometry& g,
                          const PackedWeights& w,
                          const QuantizedRows& x,
                          const Scratch& s) {
  const __m512i ones = _mm512_set1_epi8(1);
  // Per 16 bytes (two units a, b): a's even values, b's, a's odd, b's.
  const __m512i split = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
  const __m512i evens = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odds = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  const int64_t chunk_values = kLanes * g.unit;
  for (int64_t m = 0; m < x.rows; ++m) {
    const int8_t* q = x.values + m * w.cols;
    uint8_t* out = s.rows + m * g.row_bytes;
    int32_t* unit_sums = s.unit_sums + m * 2 * g.chunks * kLanes;
    int32_t* start = unit_sums + g.chunks * kLanes;
    const __m512i offset =
        _mm512_set1_epi32(static_cast<int32_t>(g.unit) * x.zero_points[m]);
    for (int64_t c = 0; c < g.chunks; ++c) {
      const int64_t values = std::min(chunk_values, w.cols - c * chunk_values);
      const int8_t* in = q + c * chunk_values;
      __m512i sums;
      if (g.four_bit) {
        const auto mask_of = [](int64_t n) {
          return n >= 64 ? ~__mmask64{0}
                         : (n <= 0 ? __mmask64{0} : (__mmask64{1} << n) - 1);
        };
        const __m512i a = _mm512_shuffle_epi8(
            _mm512_maskz_loadu_epi8(mask_of(values), in), split);
        const __m512i b = _mm512_shuffle_epi8(
            _mm512_maskz_loadu_epi8(mask_of(values - 64), in + 64), split);
        const __m512i even = _mm512_permutex2var_epi64(a, evens, b);
        const __m512i odd = _mm512_permutex2var_epi64(a, odds, b);
        _mm512_store_si512(out + c * 128, even);
        _mm512_store_si512(out + c * 128 + 64, odd);
        sums = _mm512_dpbusd_epi32(
            _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, even), ones, odd);
      } else {
        const __mmask64 mask =
            values >= 64 ? ~__mmask64{0} : (__mmask64{1} << values) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(mask, in);
        _mm512_store_si512(out + c * 64, v);
        sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, v);
      }
      // Sums of (xq - x_zp) over the chunk's units; 0 past the row's end.
      const int64_t units = values / g.unit;
      const __m512i unit_sum = _mm512_maskz_sub_epi32(
          static_cast<__mmask16>((1u << units) - 1), sums, offset);
      _mm512_store_si512(unit_sums + c * kLanes, unit_sum);
      _mm512_store_si512(
          start + c * kLanes,
          _mm512_sub_epi32(_mm512_setzero_si512(),
                           _mm512_slli_epi32(unit_sum, g.four_bit ? 3 : 7)));
    }
    // Group by group (a division per unit was 80% of this function).
    int32_t* group_sums = s.group_sums + m * g.groups;
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      const int32_t* first = unit_sums + grp * g.units_per_group;
      group_sums[grp] = std::accumulate(first, first + g.units_per_group, 0);
    }
  }
  // Chunk c's lanes hold units 16c..16c+15: their groups relative to the
  // chunk's first, so that a chunk's scales are one load and a permute.
  for (int64_t c = 0; c < g.chunks; ++c) {
    int32_t* entry = s.chunk_groups + c * 32;
    const int64_t first = (c * kLanes) / g.units_per_group;
    int64_t last = first;
    for (int64_t l = 0; l < kLanes; ++l) {
      const int64_t u = std::min(c * kLanes + l, g.units - 1);
      last = u / g.units_per_group;
      entry[l] = static_cast<int32_t>(last - first);
    }
    entry[16] = static_cast<int32_t>(first);
    entry[17] = static_cast<int32_t>(last - first + 1);
  }
}

ET_VNNI inline __m512i broadcast_slot(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// The sums of four vectors' lanes, together: pairs of vectors
// interleaved and added, then pairs of those, then the four 128-bit
// quarters (13 instructions; four _mm512_reduce_add_ps take about 32).
ET_VNNI inline __m128 sum_each(const __m512 (&v)[4]) {
  // Per quarter: v0's lanes 0+2, v1's 0+2, v0's 1+3, v1's 1+3.
  const __m512 ab = _mm512_add_ps(_mm512_unpacklo_ps(v[0], v[1]),
                                  _mm512_unpackhi_ps(v[0], v[1]));
  const __m512 cd = _mm512_add_ps(_mm512_unpacklo_ps(v[2], v[3]),
                                  _mm512_unpackhi_ps(v[2], v[3]));
  // Per quarter: the quarter's sum of v0, v1, v2, v3.
  const __m512 abcd = _mm512_add_ps(_mm512_shuffle_ps(ab, cd, 0x44),
                                    _mm512_shuffle_ps(ab, cd, 0xEE));
  const __m256 half = _mm256_add_ps(_mm512_castps512_ps256(abcd),
                                    _mm512_extractf32x8_ps(abcd, 1));
  return _mm_add_ps(_mm256_castps256_ps128(half),
                    _mm256_extractf128_ps(half, 1));
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

// What a GEMV call's inner loop depends on, fixed per call so that each
// combination compiles to a loop without branches (and with the tile's
// sums in registers).
struct GemvFormat {
  bool four_bit;
  bool split;       // the input's zero point is -128
  bool zero_points; // the weights have zero points
  bool one_group;   // every chunk lies in one group (group_size % chunk)
};

// y[n0 + r] for r < kRows, of input row m: each weight row streamed once,
// 64 bytes (one chunk) at a time, kRows rows side by side so that they
// share the input's loads. Per lane, vpdpbusd sums xq * q, then q times
// -x_zp (two halves of 64 when x_zp is -128, whose negation is no int8);
// the lane starts from -(8 or 128) * sum (xq - x_zp), and the weight's
// zero points, if any, take out zp * sum (xq - x_zp). First checks the
// tile's scales (finite, > 0) and 4-bit zero points (within [-8, 7]),
// which lie side by side in the tables: false if one is invalid. (A pass
// of its own over all the tables before the GEMV, the first to read them
// from memory, was 6-7% of an 8da4w decode step; checking each chunk's
// scale in the loop cost three vector instructions of ~16 per 64 weight
// bytes and row.)
template <int kRows,
          bool kFourBit,
          bool kSplit,
          bool kZeroPoints,
          bool kOneGroup>
ET_VNNI bool gemv_tile(const Geometry& g,
                       const PackedWeights& w,
                       const Scratch& s,
                       const QuantizedRows& x,
                       int64_t m,
                       const float* bias,
                       float* y,
                       int64_t n0) {
  const uint8_t* xrow = s.rows + m * g.row_bytes;
  const int32_t* unit_sums = s.unit_sums + m * 2 * g.chunks * kLanes;
  const int32_t* start = unit_sums + g.chunks * kLanes;
  const __m512i minus_zp =
      _mm512_set1_epi8(static_cast<char>(kSplit ? 64 : -x.zero_points[m]));
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  if (!tables_valid(
          w.scales + n0 * g.groups,
          kZeroPoints && kFourBit ? w.zero_points + n0 * g.groups : nullptr,
          kRows * g.groups)) {
    return false;
  }
  const int64_t tail_bytes = g.row_stride - (g.chunks - 1) * 64;
  const __mmask64 tail_mask =
      tail_bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << tail_bytes) - 1;
  const uint8_t* rows[kRows];
  const float* scales[kRows];
  const int8_t* zero_points[kRows];
  __m512 total[kRows];
  for (int r = 0; r < kRows; ++r) {
    rows[r] = w.data + (n0 + r) * g.row_stride;
    scales[r] = w.scales + (n0 + r) * g.groups;
    zero_points[r] =
        kZeroPoints ? w.zero_points + (n0 + r) * g.groups : nullptr;
    total[r] = _mm512_setzero_ps();
  }
  for (int64_t c = 0; c < g.chunks; ++c) {
    const __mmask64 mask = c + 1 == g.chunks ? tail_mask : ~__mmask64{0};
    const uint8_t* xc = xrow + c * g.slots_per_chunk * 4;
    const __m512i x_first = _mm512_load_si512(xc);
    const __m512i x_second =
        kFourBit ? _mm512_load_si512(xc + 64) : _mm512_setzero_si512();
    const __m512i init = _mm512_load_si512(start + c * kLanes);
    const int32_t* entry = s.chunk_groups + c * 32;
    const __m512i lane_group = _mm512_load_si512(entry);
    const __mmask16 group_mask = static_cast<__mmask16>((1u << entry[17]) - 1);
    for (int r = 0; r < kRows; ++r) {
      const uint8_t* chunk = rows[r] + c * 64;
      // The tile's rows are contiguous, and read a chunk of each in
      // turn; the prefetches run through the bytes kPrefetchBytes ahead
      // in address order instead, one line per chunk read, so that memory
      // sees one sequential stream.
      _mm_prefetch(reinterpret_cast<const char*>(rows[0] + kPrefetchBytes +
                                                 (c * kRows + r) * 64),
                   _MM_HINT_T0);
      const __m512i packed = _mm512_maskz_loadu_epi8(mask, chunk);
      __m512i acc, stored;
      if constexpr (kFourBit) {
        const __m512i high =
            _mm512_and_si512(_mm512_srli_epi16(packed, 4), nibble);
        const __m512i low = _mm512_and_si512(packed, nibble);
        acc = _mm512_dpbusd_epi32(init, high, x_first);
        acc = _mm512_dpbusd_epi32(acc, low, x_second);
        stored = _mm512_add_epi8(high, low);
      } else {
        stored = _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(packed, flip));
        acc = _mm512_dpbusd_epi32(init, stored, x_first);
      }
      acc = _mm512_dpbusd_epi32(acc, stored, minus_zp);
      if constexpr (kSplit) {
        acc = _mm512_dpbusd_epi32(acc, stored, minus_zp);
      }
      const int64_t first_group = entry[16];
      if constexpr (kZeroPoints) {
        const __m512i zp = _mm512_permutexvar_epi32(
            lane_group,
            _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(
                group_mask, zero_points[r] + first_group)));
        acc = _mm512_sub_epi32(
            acc,
            _mm512_mullo_epi32(zp, _mm512_load_si512(unit_sums + c * kLanes)));
      }
      const __m512 scale =
          kOneGroup
              ? _mm512_set1_ps(scales[r][first_group])
              : _mm512_permutexvar_ps(
                    lane_group,
                    _mm512_maskz_loadu_ps(group_mask, scales[r] + first_group));
      total[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), scale, total[r]);
    }
  }
  if constexpr (kRows == 4) {
    const __m128 b =
        bias != nullptr ? _mm_loadu_ps(bias + n0) : _mm_setzero_ps();
    _mm_storeu_ps(
        y + n0,
        _mm_add_ps(_mm_mul_ps(sum_each(total), _mm_set1_ps(x.scales[m])), b));
  } else {
    for (int r = 0; r < kRows; ++r) {
      const int64_t n = n0 + r;
      y[n] = _mm512_reduce_add_ps(total[r]) * x.scales[m] +
             (bias != nullptr ? bias[n] : 0.f);
    }
  }
  return true;
}

constexpr int kGemvRows = 4;
// Output features per block of the GEMV: a block's weights stay in cache
// while each input row multiplies them.
constexpr int64_t kBlockRows = 64;

// y[n] for n in [begin, end) of input row m; false if some of their scales
// or zero points are invalid (gemv_tile).
template <bool kFourBit, bool kSplit, bool kZeroPoints, bool kOneGroup>
bool gemv_rows(const Geometry& g,
               const PackedWeights& w,
               const Scratch& s,
               const QuantizedRows& x,
               int64_t m,
               const float* bias,
               float* y,
               int64_t begin,
               int64_t end) {
  bool valid = true;
  int64_t n = begin;
  for (; n + kGemvRows <= end; n += kGemvRows) {
    valid &= gemv_tile<kGemvRows, kFourBit, kSplit, kZeroPoints, kOneGroup>(
        g, w, s, x, m, bias, y, n);
  }
  for (; n < end; ++n) {
    valid &= gemv_tile<1, kFourBit, kSplit, kZeroPoints, kOneGroup>(
        g, w, s, x, m, bias, y, n);
  }
  return valid;
}

using GemvFn = bool (*)(const Geometry&,
                        const PackedWeights&,
                        const Scratch&,
                        const QuantizedRows&,
                        int64_t,
                        const float*,
                        float*,
                        int64_t,
                        int64_t);

// gemv_rows for `f`, picked from its four flags.
template <bool... kFlags>
GemvFn gemv_for(const GemvFormat& f) {
  constexpr size_t kPicked = sizeof...(kFlags);
  if constexpr (kPicked == 4) {
    return gemv_rows<kFlags...>;
  } else {
    const bool flags[] = {f.four_bit, f.split, f.zero_points, f.one_group};
    return flags[kPicked] ? gemv_for<kFlags..., true>(f)
                          : gemv_for<kFlags..., false>(f);
  }
}

// Transposes 16 vectors of 16 32-bit words: word j of v[i] becomes word i
// of v[j] (four rounds of shuffles, 64 instructions).
ET_VNNI inline void transpose_16x16(__m512i (&v)[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
  }
  // Per 128-bit lane L, v[4b + j] now holds word 4L + j of rows 4b..4b+3.
  for (int b = 0; b < 16; b += 4) {
    v[b] = _mm512_unpacklo_epi64(t[b], t[b + 2]);
    v[b + 1] = _mm512_unpackhi_epi64(t[b], t[b + 2]);
    v[b + 2] = _mm512_unpacklo_epi64(t[b + 1], t[b + 3]);
    v[b + 3] = _mm512_unpackhi_epi64(t[b + 1], t[b + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm512_shuffle_i32x4(v[j], v[j + 4], 0x88);
    t[j + 4] = _mm512_shuffle_i32x4(v[j], v[j + 4], 0xdd);
    t[j + 8] = _mm512_shuffle_i32x4(v[j + 8], v[j + 12], 0x88);
    t[j + 12] = _mm512_shuffle_i32x4(v[j + 8], v[j + 12], 0xdd);
  }
  for (int j = 0; j < 8; ++j) {
    v[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
    v[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
  }
}

// Copies weight rows [n0, n0 + count) (count <= 16) into a panel, 16
// units at a time (one 64-byte load per row, then a transpose), with
// their per-group sums, c and scales.
ET_VNNI void pack_panel(const Geometry& g,
                        const PackedWeights& w,
                        int64_t n0,
                        int64_t count,
                        uint8_t* panel) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const uint8_t* base = w.data + n0 * g.row_stride;
  uint8_t* per_group = panel + round_up(kLanes * g.row_bytes);
  __m512i sums = _mm512_setzero_si512();
  for (int64_t u0 = 0; u0 < g.units; u0 += kLanes) {
    const int64_t units = std::min(kLanes, g.units - u0);
    const __mmask16 unit_mask = static_cast<__mmask16>((1u << units) - 1);
    __m512i v[16];
    for (int i = 0; i < count; ++i) {
      // 16 rows are 16 streams: fetch two blocks ahead.
      _mm_prefetch(reinterpret_cast<const char*>(base + i * g.row_stride +
                                                 (u0 + 2 * kLanes) * 4),
                   _MM_HINT_T0);
    }
    for (int i = 0; i < 16; ++i) {
      v[i] = i < count ? _mm512_maskz_loadu_epi32(
                             unit_mask, base + i * g.row_stride + u0 * 4)
                       : _mm512_setzero_si512();
    }
    transpose_16x16(v);
    for (int64_t j = 0; j < units; ++j) {
      const int64_t u = u0 + j;
      if (g.four_bit) {
        const __m512i high =
            _mm512_and_si512(_mm512_srli_epi16(v[j], 4), nibble);
        const __m512i low = _mm512_and_si512(v[j], nibble);
        uint8_t* even = panel + even_slot(g, u) * 64;
        _mm512_store_si512(even, high);
        _mm512_store_si512(even + kLanes * 64, low);
        sums = _mm512_dpbusd_epi32(sums, _mm512_add_epi8(high, low), ones);
      } else {
        const __m512i stored = _mm512_xor_si512(v[j], flip);
        _mm512_store_si512(panel + u * 64, stored);
        sums = _mm512_dpbusd_epi32(sums, stored, ones);
      }
      if ((u + 1) % g.units_per_group != 0) {
        continue;
      }
      const int64_t grp = u / g.units_per_group;
      int32_t* entry = reinterpret_cast<int32_t*>(per_group + grp * 3 * 64);
      _mm512_store_si512(entry, sums);
      sums = _mm512_setzero_si512();
      float* scales = reinterpret_cast<float*>(entry + 2 * kLanes);
      for (int64_t l = 0; l < kLanes; ++l) {
        const int64_t n = n0 + std::min(l, count - 1);
        const int32_t zp =
            w.zero_points != nullptr ? w.zero_points[n * g.groups + grp] : 0;
        entry[kLanes + l] = (g.four_bit ? 8 : 128) + zp;
        scales[l] = w.scales[n * g.groups + grp];
      }
    }
  }
}

// acc[i][p] += the products of input row i's word at `slot` with panel p's
// vector there.
template <int kRows, int kPanels>
ET_VNNI __attribute__((always_inline)) inline void multiply_slot(
    __m512i (&acc)[kRows][kPanels],
    const uint8_t* panels,
    size_t panel_bytes,
    const uint8_t* xrows,
    int64_t row_bytes,
    int64_t slot) {
  __m512i weights[kPanels];
  for (int p = 0; p < kPanels; ++p) {
    weights[p] = _mm512_load_si512(panels + p * panel_bytes + slot * 64);
  }
  for (int i = 0; i < kRows; ++i) {
    const __m512i words = broadcast_slot(xrows + i * row_bytes + slot * 4);
    for (int p = 0; p < kPanels; ++p) {
      acc[i][p] =
          ::executorch::kernels::vnni::dpbusd(acc[i][p], weights[p], words);
    }
  }
}

// y[m0 + i, n0 + l] for i < kRows, l < count, from kPanels packed panels
// side by side (count <= 16 kPanels): each broadcast input word feeds
// kPanels products, each weight vector kRows. With kOneGroup (the weights
// have one group per row: per-channel int8), the integer sums run over
// the whole row and are scaled once, so the registers need not also hold
// kRows x kPanels float totals and the tile takes more rows.
template <int kRows, int kPanels, bool kOneGroup, bool kFourBit>
ET_VNNI void gemm_tile(const Geometry& g,
                       const Scratch& s,
                       const QuantizedRows& x,
                       int64_t m0,
                       const uint8_t* panels,
                       int64_t n0,
                       int64_t count,
                       const float* bias,
                       float* y,
                       int64_t y_stride) {
  const size_t panel_bytes = Scratch::panel_bytes(g);
  const size_t weight_bytes = round_up(kLanes * g.row_bytes);
  const uint8_t* xrows = s.gemm_rows + m0 * s.gemm_row_bytes;
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
      if constexpr (kFourBit) {
        // The unit's even values, then its odd ones.
        const int64_t even = even_slot(g, u);
        multiply_slot(acc, panels, panel_bytes, xrows, s.gemm_row_bytes, even);
        multiply_slot(
            acc, panels, panel_bytes, xrows, s.gemm_row_bytes, even + kLanes);
      } else {
        multiply_slot(acc, panels, panel_bytes, xrows, s.gemm_row_bytes, u);
      }
    }
    for (int p = 0; p < kPanels; ++p) {
      const int32_t* entry = reinterpret_cast<const int32_t*>(
          panels + p * panel_bytes + weight_bytes + grp * 3 * 64);
      const __m512i weight_sums = _mm512_load_si512(entry);
      const __m512i c = _mm512_load_si512(entry + kLanes);
      const __m512 scales = _mm512_load_ps(entry + 2 * kLanes);
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
    const __mmask16 mask = static_cast<__mmask16>((1u << columns) - 1);
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
                        const uint8_t*,
                        int64_t,
                        int64_t,
                        const float*,
                        float*,
                        int64_t);

// Input rows of a tile of `panels` panels, as many as the 32 registers
// hold: rows x panels accumulators, the panels' weight vectors and a
// broadcast input word, plus as many float totals as accumulators when the
// weights have several groups per row.
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
  const Scratch::Sizes s = Scratch::sizes(geometry_of(w), rows_x);
  return s.rows + s.unit_sums + s.group_sums + s.chunk_groups + s.panel;
}

bool linear_dynamic(const QuantizedRows& x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    void* scratch) {
  const Geometry g = geometry_of(w);
  Scratch s(g, x.rows, scratch);
  if (gemm_reads_input(g, x)) {
    s.gemm_rows = reinterpret_cast<const uint8_t*>(x.values);
    s.gemm_row_bytes = w.cols;
    sum_rows(w, x, s);
  } else {
    prepare_rows(g, w, x, s);
  }
  std::atomic<bool> valid{true};
  const auto check = [&](int64_t begin, int64_t end) {
    if (!weight_rows_valid(w, begin, end)) {
      valid.store(false, std::memory_order_relaxed);
    }
  };
  if (x.rows < kGemmMinRows) {
    GemvFn gemv[kGemmMinRows];
    for (int64_t m = 0; m < x.rows; ++m) {
      gemv[m] = gemv_for<>(GemvFormat{g.four_bit,
                                      x.zero_points[m] == -128,
                                      w.zero_points != nullptr,
                                      w.group_size % (kLanes * g.unit) == 0});
    }
    split_over_threads(
        w.rows, w.cols * x.rows, [&](int64_t begin, int64_t end, int64_t) {
          bool all_valid = true;
          for (int64_t first = begin; first < end; first += kBlockRows) {
            const int64_t last = std::min(first + kBlockRows, end);
            for (int64_t m = 0; m < x.rows; ++m) {
              all_valid &=
                  gemv[m](g, w, s, x, m, bias, y + m * w.rows, first, last);
            }
          }
          if (!all_valid) {
            valid.store(false, std::memory_order_relaxed);
          }
        });
    return valid.load(std::memory_order_relaxed);
  }
  // Pairs of panels: 32 output features, packed then multiplied with
  // every input row.
  const Tiles tiles = tiles_for(g);
  const int64_t pairs = (w.rows + 2 * kLanes - 1) / (2 * kLanes);
  split_over_threads(
      pairs,
      2 * kLanes * w.cols * x.rows,
      [&](int64_t begin, int64_t end, int64_t slice) {
        uint8_t* panels = s.panels + slice * 2 * Scratch::panel_bytes(g);
        for (int64_t pair = begin; pair < end; ++pair) {
          const int64_t n0 = pair * 2 * kLanes;
          const int64_t count = std::min(2 * kLanes, w.rows - n0);
          check(n0, n0 + count);
          pack_panel(g, w, n0, std::min(kLanes, count), panels);
          const bool wide = count > kLanes;
          if (wide) {
            pack_panel(g,
                       w,
                       n0 + kLanes,
                       count - kLanes,
                       panels + Scratch::panel_bytes(g));
          }
          const int64_t tile = tile_rows(tiles.one_group, wide ? 2 : 1);
          for (int64_t m0 = 0; m0 < x.rows; m0 += tile) {
            const int64_t rows = std::min(tile, x.rows - m0);
            tiles.of_panels[wide ? 1 : 0][rows - 1](
                g, s, x, m0, panels, n0, count, bias, y, w.rows);
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
