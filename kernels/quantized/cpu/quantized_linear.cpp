#include <executorch/kernels/quantized/cpu/quantized_linear.h>

#include <executorch/kernels/quantized/cpu/affine.h>
#include <executorch/kernels/quantized/cpu/quantized_linear_vnni.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#define ET_QUANTIZED_X86 1
#endif

namespace torch {
namespace executor {
namespace native {
namespace quantized {

namespace {

Isa isa_limit = Isa::kAvx512Vnni;

Isa cpu_isa() {
#ifdef ET_QUANTIZED_X86
  static const Isa isa = [] {
    if (__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vnni")) {
      return Isa::kAvx512Vnni;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      return Isa::kAvx2;
    }
    return Isa::kPortable;
  }();
  return isa;
#else
  return Isa::kPortable;
#endif
}

int64_t groups_per_row(const PackedWeights& w) {
  return w.cols / w.group_size;
}

int32_t zero_point_of(const PackedWeights& w, int64_t n, int64_t g) {
  return w.zero_points == nullptr
             ? 0
             : static_cast<int32_t>(w.zero_points[n * groups_per_row(w) + g]);
}

const uint8_t* row_data(const PackedWeights& w, int64_t n) {
  return w.data + n * (w.bits == 4 ? w.cols / 2 : w.cols);
}

// Values [begin, begin + count) of row n minus `zp`, as int16 (begin and
// count even for 4-bit rows).
void unpack_portable(const PackedWeights& w,
                     int64_t n,
                     int64_t begin,
                     int64_t count,
                     int32_t zp,
                     int16_t* out) {
  const uint8_t* row = row_data(w, n);
  if (w.bits == 8) {
    const int8_t* q = reinterpret_cast<const int8_t*>(row) + begin;
    for (int64_t i = 0; i < count; ++i) {
      out[i] = static_cast<int16_t>(q[i] - zp);
    }
    return;
  }
  const uint8_t* bytes = row + begin / 2;
  for (int64_t i = 0; i < count / 2; ++i) {
    out[2 * i] = static_cast<int16_t>((bytes[i] >> 4) - 8 - zp);
    out[2 * i + 1] = static_cast<int16_t>((bytes[i] & 0x0F) - 8 - zp);
  }
}

// sum_g scales[g] * sum_{i in group g} a[i] * b[i], over n values in
// groups of `group` (exact int32 sums per group).
float grouped_dot_portable(const int16_t* a,
                           const int16_t* b,
                           const float* scales,
                           int64_t n,
                           int64_t group) {
  float total = 0.f;
  for (int64_t begin = 0, g = 0; begin < n; begin += group, ++g) {
    int32_t sum = 0;
    for (int64_t i = begin; i < begin + group; ++i) {
      sum += static_cast<int32_t>(a[i]) * b[i];
    }
    total += static_cast<float>(sum) * scales[g];
  }
  return total;
}

float dot_portable(const float* a, const float* b, int64_t n) {
  float sum = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    sum += a[i] * b[i];
  }
  return sum;
}

#ifdef ET_QUANTIZED_X86

__attribute__((target("avx2"))) void unpack_avx2(const PackedWeights& w,
                                                 int64_t n,
                                                 int64_t begin,
                                                 int64_t count,
                                                 int32_t zp,
                                                 int16_t* out) {
  const uint8_t* row = row_data(w, n);
  int64_t i = 0;
  if (w.bits == 8) {
    const int8_t* q = reinterpret_cast<const int8_t*>(row) + begin;
    const __m256i offset = _mm256_set1_epi16(static_cast<int16_t>(zp));
    for (; i + 16 <= count; i += 16) {
      const __m128i bytes =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + i));
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(out + i),
          _mm256_sub_epi16(_mm256_cvtepi8_epi16(bytes), offset));
    }
    for (; i < count; ++i) {
      out[i] = static_cast<int16_t>(q[i] - zp);
    }
    return;
  }
  const uint8_t* bytes = row + begin / 2;
  const __m128i low_nibbles = _mm_set1_epi8(0x0F);
  const __m256i offset = _mm256_set1_epi16(static_cast<int16_t>(8 + zp));
  // 16 bytes hold 32 values: high nibbles are the even ones.
  for (; i + 32 <= count; i += 32) {
    const __m128i packed =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + i / 2));
    const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4), low_nibbles);
    const __m128i low = _mm_and_si128(packed, low_nibbles);
    const __m128i first = _mm_unpacklo_epi8(high, low);
    const __m128i second = _mm_unpackhi_epi8(high, low);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm256_sub_epi16(_mm256_cvtepu8_epi16(first), offset));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 16),
                        _mm256_sub_epi16(_mm256_cvtepu8_epi16(second), offset));
  }
  for (; i < count; i += 2) {
    const uint8_t byte = bytes[i / 2];
    out[i] = static_cast<int16_t>((byte >> 4) - 8 - zp);
    out[i + 1] = static_cast<int16_t>((byte & 0x0F) - 8 - zp);
  }
}

__attribute__((target("avx2,fma"))) float grouped_dot_avx2(const int16_t* a,
                                                           const int16_t* b,
                                                           const float* scales,
                                                           int64_t n,
                                                           int64_t group) {
  // Each group's products sum exactly in eight int32 lanes, which are then
  // scaled into eight float lanes; one horizontal sum at the end.
  __m256 acc = _mm256_setzero_ps();
  float tail = 0.f;
  const int64_t vector_part = group - group % 16;
  for (int64_t begin = 0, g = 0; begin < n; begin += group, ++g) {
    __m256i sum = _mm256_setzero_si256();
    for (int64_t i = begin; i < begin + vector_part; i += 16) {
      sum = _mm256_add_epi32(
          sum,
          _mm256_madd_epi16(
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)),
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i))));
    }
    acc = _mm256_fmadd_ps(
        _mm256_cvtepi32_ps(sum), _mm256_set1_ps(scales[g]), acc);
    if (vector_part != group) {
      int32_t rest = 0;
      for (int64_t i = begin + vector_part; i < begin + group; ++i) {
        rest += static_cast<int32_t>(a[i]) * b[i];
      }
      tail += static_cast<float>(rest) * scales[g];
    }
  }
  __m128 sum =
      _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  return _mm_cvtss_f32(sum) + tail;
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a,
                                                   const float* b,
                                                   int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 =
        _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(
        _mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  const __m256 acc = _mm256_add_ps(acc0, acc1);
  __m128 sum =
      _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));
  float total = _mm_cvtss_f32(sum);
  for (; i < n; ++i) {
    total += a[i] * b[i];
  }
  return total;
}

bool has_avx2() {
  return best_isa() >= Isa::kAvx2;
}

#endif // ET_QUANTIZED_X86

// The loops below are written once over these three primitives, which
// pick the vector version when the CPU has it.
void unpack(const PackedWeights& w,
            int64_t n,
            int64_t begin,
            int64_t count,
            int32_t zp,
            int16_t* out) {
#ifdef ET_QUANTIZED_X86
  if (has_avx2()) {
    unpack_avx2(w, n, begin, count, zp, out);
    return;
  }
#endif
  unpack_portable(w, n, begin, count, zp, out);
}

float dot(const float* a, const float* b, int64_t n) {
#ifdef ET_QUANTIZED_X86
  if (has_avx2()) {
    return dot_avx2(a, b, n);
  }
#endif
  return dot_portable(a, b, n);
}

float grouped_dot(const int16_t* a,
                  const int16_t* b,
                  const float* scales,
                  int64_t n,
                  int64_t group) {
#ifdef ET_QUANTIZED_X86
  if (has_avx2()) {
    return grouped_dot_avx2(a, b, scales, n, group);
  }
#endif
  return grouped_dot_portable(a, b, scales, n, group);
}

// Unpacks rows [first, first + count) of `w` in the row layout as int16
// values minus their zero points, row after row.
void unpack_rows(const PackedWeights& w,
                 int64_t first,
                 int64_t count,
                 int16_t* out) {
  const int64_t groups = groups_per_row(w);
  for (int64_t j = 0; j < count; ++j) {
    for (int64_t g = 0; g < groups; ++g) {
      unpack(w,
             first + j,
             g * w.group_size,
             w.group_size,
             zero_point_of(w, first + j, g),
             out + j * w.cols + g * w.group_size);
    }
  }
}

// Values k..k + n of a feature (n <= one word's) from its word in the
// panel layout.
void unpack_word(int bits, const uint8_t* word, int64_t n, int16_t* out) {
  for (int64_t t = 0; t < n; ++t) {
    out[t] = static_cast<int16_t>(
        bits == 8 ? word[t] - 128
                  : (t < 4 ? word[t] & 0x0F : word[t - 4] >> 4) - 8);
  }
}

#ifdef ET_QUANTIZED_X86

// Words [0, words) of four consecutive features of a panel (the first's at
// `word`, `stride` bytes from one word to the next) into int16 rows of K.
__attribute__((target("avx2"))) void unpack_words_avx2(int bits,
                                                       const uint8_t* word,
                                                       int64_t stride,
                                                       int64_t words,
                                                       int64_t cols,
                                                       int16_t* out) {
  const __m128i nibble = _mm_set1_epi8(0x0F);
  const __m256i offset = _mm256_set1_epi16(bits == 8 ? 128 : 8);
  for (int64_t u = 0; u < words; ++u, word += stride) {
    const __m128i bytes =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(word));
    if (bits == 8) {
      // Four features' four values: a 64-bit quarter each.
      const __m256i v = _mm256_sub_epi16(_mm256_cvtepu8_epi16(bytes), offset);
      const __m128i low = _mm256_castsi256_si128(v);
      const __m128i high = _mm256_extracti128_si256(v, 1);
      int16_t* at = out + u * 4;
      _mm_storel_epi64(reinterpret_cast<__m128i*>(at), low);
      _mm_storeh_pd(reinterpret_cast<double*>(at + cols),
                    _mm_castsi128_pd(low));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(at + 2 * cols), high);
      _mm_storeh_pd(reinterpret_cast<double*>(at + 3 * cols),
                    _mm_castsi128_pd(high));
      continue;
    }
    // Per feature its four low nibbles, then its four high ones.
    const __m128i low = _mm_and_si128(bytes, nibble);
    const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), nibble);
    const __m256i first = _mm256_sub_epi16(
        _mm256_cvtepu8_epi16(_mm_unpacklo_epi32(low, high)), offset);
    const __m256i second = _mm256_sub_epi16(
        _mm256_cvtepu8_epi16(_mm_unpackhi_epi32(low, high)), offset);
    int16_t* at = out + u * 8;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at),
                     _mm256_castsi256_si128(first));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at + cols),
                     _mm256_extracti128_si256(first, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at + 2 * cols),
                     _mm256_castsi256_si128(second));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(at + 3 * cols),
                     _mm256_extracti128_si256(second, 1));
  }
}

#endif // ET_QUANTIZED_X86

// Output features [first, first + count) of `w` in the panel layout as
// int16 rows of K values minus their zero points.
void unpack_panel_rows(const PackedWeights& w,
                       int64_t first,
                       int64_t count,
                       int16_t* out) {
  const int64_t unit = panel_word_values(w.bits);
  const int64_t row_bytes = panel_row_bytes(w.bits, w.cols);
  const int64_t groups = groups_per_row(w);
  const int64_t whole_words = w.cols / unit;
  int64_t j = 0;
#ifdef ET_QUANTIZED_X86
  // Four features at a time (a block lies in one panel), whole words.
  for (; has_avx2() && j + 4 <= count; j += 4) {
    const int64_t n = first + j;
    const int64_t n0 = n - n % 16;
    const int64_t stride = std::min<int64_t>(16, w.rows - n0) * 4;
    unpack_words_avx2(w.bits,
                      w.data + n0 * row_bytes + (n - n0) * 4,
                      stride,
                      whole_words,
                      w.cols,
                      out + j * w.cols);
    for (int64_t f = j; f < j + 4; ++f) {
      const uint8_t* word =
          w.data + n0 * row_bytes + (first + f - n0) * 4 + whole_words * stride;
      unpack_word(w.bits,
                  word,
                  w.cols - whole_words * unit,
                  out + f * w.cols + whole_words * unit);
    }
  }
#endif
  for (; j < count; ++j) {
    const int64_t n = first + j;
    const int64_t n0 = n - n % 16;
    const int64_t stride = std::min<int64_t>(16, w.rows - n0) * 4;
    const uint8_t* word = w.data + n0 * row_bytes + (n - n0) * 4;
    int16_t* row = out + j * w.cols;
    // Runs of the feature's words gathered side by side, then unpacked in
    // loops the compiler vectorises (one per word was 3x slower).
    constexpr int64_t kRun = 256;
    uint8_t bytes[kRun * 4];
    for (int64_t u0 = 0; u0 < whole_words; u0 += kRun) {
      const int64_t words = std::min(kRun, whole_words - u0);
      for (int64_t u = 0; u < words; ++u, word += stride) {
        std::memcpy(bytes + u * 4, word, 4);
      }
      int16_t* at = row + u0 * unit;
      if (w.bits == 8) {
        for (int64_t i = 0; i < words * 4; ++i) {
          at[i] = static_cast<int16_t>(bytes[i] - 128);
        }
        continue;
      }
      for (int64_t u = 0; u < words; ++u) {
        for (int t = 0; t < 4; ++t) {
          at[u * 8 + t] = static_cast<int16_t>((bytes[u * 4 + t] & 0x0F) - 8);
          at[u * 8 + 4 + t] = static_cast<int16_t>((bytes[u * 4 + t] >> 4) - 8);
        }
      }
    }
    unpack_word(
        w.bits, word, w.cols - whole_words * unit, row + whole_words * unit);
  }
  for (j = 0; j < count && w.zero_points != nullptr; ++j) {
    int16_t* row = out + j * w.cols;
    for (int64_t g = 0; g < groups; ++g) {
      const int16_t zp = static_cast<int16_t>(zero_point_of(w, first + j, g));
      for (int64_t k = g * w.group_size; k < (g + 1) * w.group_size; ++k) {
        row[k] = static_cast<int16_t>(row[k] - zp);
      }
    }
  }
}

// Calls block(first, count, slice) for every block of kRowBlock output
// features, over the thread pool (split_over_threads), after checking the
// block's quantization parameters; false if some were invalid.
template <typename Block>
bool for_each_row_block(const PackedWeights& w,
                        int64_t rows_x,
                        const Block& block) {
  const int64_t blocks = (w.rows + kRowBlock - 1) / kRowBlock;
  std::atomic<bool> valid{true};
  split_over_threads(blocks,
                     kRowBlock * w.cols * rows_x,
                     [&](int64_t begin, int64_t end, int64_t slice) {
                       for (int64_t b = begin; b < end; ++b) {
                         const int64_t first = b * kRowBlock;
                         const int64_t count =
                             std::min(kRowBlock, w.rows - first);
                         if (!weight_rows_valid(w, first, first + count)) {
                           valid.store(false, std::memory_order_relaxed);
                         }
                         block(first, count, slice);
                       }
                     });
  return valid.load(std::memory_order_relaxed);
}

} // namespace

Isa best_isa() {
  return std::min(cpu_isa(), isa_limit);
}

void set_isa_limit(Isa limit) {
  isa_limit = limit;
}

void split_over_threads(
    int64_t items,
    int64_t work_per_item,
    ::executorch::runtime::FunctionRef<void(int64_t, int64_t, int64_t)> f) {
  if (items <= 0) {
    return;
  }
  const int64_t worth = std::max<int64_t>(
      1, items * std::max<int64_t>(work_per_item, 1) / kMinRunWork);
  const int64_t runs =
      std::min<int64_t>({static_cast<int64_t>(scratch_slices()), worth, items});
  ::executorch::extension::parallel_for(
      0, runs, 1, [&](int64_t begin, int64_t end) {
        for (int64_t run = begin; run < end; ++run) {
          f(items * run / runs, items * (run + 1) / runs, run);
        }
      });
}

size_t scratch_slices() {
  const int64_t threads = ::executorch::extension::get_thread_count();
  return static_cast<size_t>(
      std::min<int64_t>(std::max<int64_t>(threads, 1), kMaxThreads));
}

bool linear_weight_only(const float* x,
                        int64_t rows_x,
                        const PackedWeights& w,
                        const float* bias,
                        float* y,
                        void* scratch) {
  const int64_t groups = groups_per_row(w);
  return for_each_row_block(
      w, rows_x, [&](int64_t first, int64_t count, int64_t slice) {
        float* rows = reinterpret_cast<float*>(
            static_cast<char*>(scratch) + slice * weight_only_slice_bytes(w));
        int16_t* values = reinterpret_cast<int16_t*>(rows + kRowBlock * w.cols);
        unpack_rows(w, first, count, values);
        for (int64_t j = 0; j < count; ++j) {
          const float* scales = w.scales + (first + j) * groups;
          for (int64_t k = 0; k < w.cols; ++k) {
            rows[j * w.cols + k] = static_cast<float>(values[j * w.cols + k]) *
                                   scales[k / w.group_size];
          }
        }
        for (int64_t m = 0; m < rows_x; ++m) {
          for (int64_t j = 0; j < count; ++j) {
            const float b = bias != nullptr ? bias[first + j] : 0.f;
            y[m * w.rows + first + j] =
                dot(x + m * w.cols, rows + j * w.cols, w.cols) + b;
          }
        }
      });
}

namespace {

// Bytes of the int16 copy of the input the AVX2 and portable loops read,
// and of one thread's unpacked weight rows.
size_t widened_input_bytes(const PackedWeights& w, int64_t rows_x) {
  return (static_cast<size_t>(rows_x * w.cols) * sizeof(int16_t) + 63) / 64 *
         64;
}
size_t dynamic_slice_bytes(const PackedWeights& w) {
  return static_cast<size_t>(kRowBlock * w.cols) * sizeof(int16_t);
}

bool use_vnni(const PackedWeights& w) {
#ifdef ET_QUANTIZED_X86
  return best_isa() == Isa::kAvx512Vnni && vnni::supports(w);
#else
  (void)w;
  return false;
#endif
}

} // namespace

size_t dynamic_scratch_bytes(const PackedWeights& w, int64_t rows_x) {
#ifdef ET_QUANTIZED_X86
  if (use_vnni(w)) {
    return vnni::dynamic_scratch_bytes(w, rows_x);
  }
#endif
  return widened_input_bytes(w, rows_x) +
         dynamic_slice_bytes(w) * scratch_slices();
}

bool linear_dynamic(const QuantizedRows& x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    void* scratch) {
  if (x.rows == 0 || w.rows == 0) {
    return weight_rows_valid(w, 0, w.rows);
  }
#ifdef ET_QUANTIZED_X86
  if (use_vnni(w)) {
    return vnni::linear_dynamic(x, w, bias, y, scratch);
  }
#endif
  // Inputs minus their zero points, within [-255, 255].
  int16_t* xq = static_cast<int16_t*>(scratch);
  for (int64_t m = 0; m < x.rows; ++m) {
    for (int64_t k = 0; k < w.cols; ++k) {
      xq[m * w.cols + k] =
          static_cast<int16_t>(x.values[m * w.cols + k] - x.zero_points[m]);
    }
  }
  int16_t* unpacked = reinterpret_cast<int16_t*>(
      static_cast<char*>(scratch) + widened_input_bytes(w, x.rows));
  const int64_t groups = groups_per_row(w);
  return for_each_row_block(
      w, x.rows, [&](int64_t first, int64_t count, int64_t slice) {
        int16_t* values =
            unpacked + slice * (dynamic_slice_bytes(w) / sizeof(int16_t));
        unpack_panel_rows(w, first, count, values);
        for (int64_t m = 0; m < x.rows; ++m) {
          for (int64_t j = 0; j < count; ++j) {
            const float b = bias != nullptr ? bias[first + j] : 0.f;
            const float sum = grouped_dot(xq + m * w.cols,
                                          values + j * w.cols,
                                          w.scales + (first + j) * groups,
                                          w.cols,
                                          w.group_size);
            y[m * w.rows + first + j] = sum * x.scales[m] + b;
          }
        }
      });
}

bool weight_rows_valid(const PackedWeights& w, int64_t begin, int64_t end) {
  const int64_t groups = groups_per_row(w);
  const float* scales = w.scales + begin * groups;
  const int64_t n = (end - begin) * groups;
  // No early exit, and an int32 result, so that the compiler vectorises
  // the loops (a bool one stays scalar, 3-4x slower). NaN fails both
  // comparisons.
  int32_t valid = 1;
  const float largest = std::numeric_limits<float>::max();
  for (int64_t i = 0; i < n; ++i) {
    valid &= static_cast<int32_t>(scales[i] > 0.f) &
             static_cast<int32_t>(scales[i] <= largest);
  }
  if (w.zero_points != nullptr) {
    const int8_t* zero_points = w.zero_points + begin * groups;
    const int32_t qmax = w.bits == 4 ? 7 : 127;
    for (int64_t i = 0; i < n; ++i) {
      valid &= static_cast<int32_t>(zero_points[i] >= -qmax - 1) &
               static_cast<int32_t>(zero_points[i] <= qmax);
    }
  }
  return valid != 0;
}

bool find_min_max(const float* x, int64_t n, float* lo, float* hi) {
#ifdef ET_QUANTIZED_X86
  if (best_isa() == Isa::kAvx512Vnni) {
    return vnni::find_min_max(x, n, lo, hi);
  }
#endif
  return min_max(x, n, lo, hi); // affine.h's scalar loop
}

void quantize_int8(const float* x,
                   int64_t n,
                   float inverse_scale,
                   int32_t zero_point,
                   int32_t qmin,
                   int32_t qmax,
                   int8_t* q) {
#ifdef ET_QUANTIZED_X86
  if (best_isa() == Isa::kAvx512Vnni) {
    vnni::quantize_int8(x, n, inverse_scale, zero_point, qmin, qmax, q);
    return;
  }
#endif
  const float zp = static_cast<float>(zero_point);
  const float lo = static_cast<float>(qmin), hi = static_cast<float>(qmax);
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::nearbyint(x[i] * inverse_scale) + zp;
    q[i] = static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
  }
}

} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
