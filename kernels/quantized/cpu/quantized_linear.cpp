#include <executorch/kernels/quantized/cpu/quantized_linear.h>

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define ET_QUANTIZED_X86 1
#endif

namespace torch {
namespace executor {
namespace native {
namespace quantized {

namespace {

bool vector_loops_enabled = true;

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

int32_t dot_portable(const int16_t* a, const int16_t* b, int64_t n) {
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += static_cast<int32_t>(a[i]) * b[i];
  }
  return sum;
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
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out + i),
        _mm256_sub_epi16(_mm256_cvtepu8_epi16(first), offset));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(out + i + 16),
        _mm256_sub_epi16(_mm256_cvtepu8_epi16(second), offset));
  }
  for (; i < count; i += 2) {
    const uint8_t byte = bytes[i / 2];
    out[i] = static_cast<int16_t>((byte >> 4) - 8 - zp);
    out[i + 1] = static_cast<int16_t>((byte & 0x0F) - 8 - zp);
  }
}

__attribute__((target("avx2"))) int32_t dot_avx2(const int16_t* a,
                                                 const int16_t* b,
                                                 int64_t n) {
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc = _mm256_add_epi32(
        acc,
        _mm256_madd_epi16(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)),
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i))));
  }
  __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(acc),
                              _mm256_extracti128_si256(acc, 1));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4E));
  sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xB1));
  int32_t total = _mm_cvtsi128_si32(sum);
  for (; i < n; ++i) {
    total += static_cast<int32_t>(a[i]) * b[i];
  }
  return total;
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a,
                                                   const float* b,
                                                   int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
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
  static const bool supported =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported && vector_loops_enabled;
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

template <typename T>
auto dot(const T* a, const T* b, int64_t n) {
#ifdef ET_QUANTIZED_X86
  if (has_avx2()) {
    return dot_avx2(a, b, n);
  }
#endif
  return dot_portable(a, b, n);
}

} // namespace

void set_vector_loops_enabled(bool enabled) {
  vector_loops_enabled = enabled;
}

void linear_weight_only(const float* x,
                        int64_t rows_x,
                        const PackedWeights& w,
                        const float* bias,
                        float* y,
                        void* scratch) {
  const int64_t groups = groups_per_row(w);
  float* row = static_cast<float*>(scratch);
  int16_t* values = reinterpret_cast<int16_t*>(row + w.cols);
  for (int64_t n = 0; n < w.rows; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t begin = g * w.group_size;
      unpack(w, n, begin, w.group_size, zero_point_of(w, n, g), values);
      const float scale = w.scales[n * groups + g];
      for (int64_t i = 0; i < w.group_size; ++i) {
        row[begin + i] = static_cast<float>(values[i]) * scale;
      }
    }
    const float b = bias != nullptr ? bias[n] : 0.f;
    for (int64_t m = 0; m < rows_x; ++m) {
      y[m * w.rows + n] = dot(x + m * w.cols, row, w.cols) + b;
    }
  }
}

void linear_dynamic(const int16_t* xq,
                    const float* x_scales,
                    int64_t rows_x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    int16_t* scratch) {
  const int64_t groups = groups_per_row(w);
  for (int64_t n = 0; n < w.rows; ++n) {
    const float b = bias != nullptr ? bias[n] : 0.f;
    for (int64_t m = 0; m < rows_x; ++m) {
      y[m * w.rows + n] = 0.f;
    }
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t begin = g * w.group_size;
      unpack(w, n, begin, w.group_size, zero_point_of(w, n, g), scratch);
      const float scale = w.scales[n * groups + g];
      for (int64_t m = 0; m < rows_x; ++m) {
        const int32_t sum = dot(xq + m * w.cols + begin, scratch, w.group_size);
        y[m * w.rows + n] += static_cast<float>(sum) * scale;
      }
    }
    for (int64_t m = 0; m < rows_x; ++m) {
      y[m * w.rows + n] = y[m * w.rows + n] * x_scales[m] + b;
    }
  }
}

} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
