#pragma once

// What the host int8 convolution kernels (qs8_conv.h: one group;
// qs8_dwconv.h: depthwise) share: the shape and quantization they are given,
// the CPU check, the bias that absorbs the shift of their unsigned operand,
// and the requantization, in scalar and AVX-512 form so that the portable
// and vector kernels agree bit for bit.
//
// Arithmetic: vpdpbusd multiplies unsigned by signed bytes, so the
// activations become unsigned (x + 128, the sign bit flipped: the depthwise
// kernel when it gathers them, the one-group kernel on each broadcast, so
// that it reads 1x1 rows in the input as they are). Each output channel's
// bias absorbs -(128 + input zero point) times the sum of its weights: the
// integer sum is exactly bias + sum((x - zero_point) * w). Padding reads the
// input zero point (a zero after the shift).
// Requantization is XNNPACK's fp32 scheme: acc * (input scale * filter
// scale / output scale), clamped to the output range less the zero point,
// rounded to nearest even, plus the output zero point.

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__)
// GCC 12's AVX-512 headers start conversions and extractions from
// _mm512_undefined_*() / _mm256_undefined_*(), which -Wmaybe-uninitialized
// and -Wuninitialized report at every use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define ET_QS8_HAVE_VNNI 1
// The instruction sets of the vector kernels (vnni_available() checks them).
#define ET_QS8_VNNI_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

struct Qs8ConvShape {
  size_t kernel_h = 1, kernel_w = 1;
  size_t stride_h = 1, stride_w = 1;
  size_t dilation_h = 1, dilation_w = 1;
  size_t pad_top = 0, pad_left = 0;
  // Depthwise: both are the channel count.
  size_t in_channels = 0, out_channels = 0;
};

struct Qs8ConvQuant {
  float input_scale = 1.0f;
  int32_t input_zero_point = 0;
  // out_channels scales, one per output channel.
  const float* filter_scales = nullptr;
  float output_scale = 1.0f;
  int32_t output_zero_point = 0;
  // The output clamp in quantized values (-128..127 without one).
  int32_t output_min = -128;
  int32_t output_max = 127;
};

namespace qs8 {

// Whether this CPU (and this build) runs the AVX512-VNNI kernels.
bool vnni_available();

inline size_t round_up(size_t n, size_t m) {
  return (n + m - 1) / m * m;
}

// The unsigned byte that padding reads: the input zero point, shifted.
inline uint8_t pad_byte(const Qs8ConvQuant& quant) {
  return static_cast<uint8_t>(128 + quant.input_zero_point);
}

// Output channel `n`'s bias (`bias`, null: 0) adjusted for the shift of
// the activations (see above). False when the kernel's sum of up to
// `products` products of unsigned and signed bytes added to it could wrap
// an int32 (XNNPACK's sums do not wrap either); the caller keeps the node
// on XNNPACK.
bool adjusted_bias(const Qs8ConvQuant& quant,
                   const int32_t* bias,
                   size_t n,
                   int64_t filter_sum,
                   size_t products,
                   int32_t* adjusted);

// Output channel `n`'s requantization scale.
inline float channel_scale(const Qs8ConvQuant& quant, size_t n) {
  return quant.input_scale * quant.filter_scales[n] / quant.output_scale;
}

// The output clamp less the zero point, in the float domain.
struct Requantization {
  int32_t zero_point = 0;
  float low = -128.0f;
  float high = 127.0f;

  Requantization() = default;
  explicit Requantization(const Qs8ConvQuant& quant)
      : zero_point(quant.output_zero_point),
        low(static_cast<float>(quant.output_min - quant.output_zero_point)),
        high(static_cast<float>(quant.output_max - quant.output_zero_point)) {}
};

// The int8 output of an int32 sum. Rounds to nearest even (nearbyint in the
// default rounding mode), as the vector form.
int8_t requantize(int32_t acc, float scale, const Requantization& r);

#ifdef ET_QS8_HAVE_VNNI
// Requantization's operands broadcast to vector lanes.
struct Requantization16 {
  __m512 low, high;
  __m512i zero_point;
  // For requantize64: the zero point in 16-bit lanes, the output's lower
  // bound in bytes.
  __m512i zero_point16, min8;
};

ET_QS8_VNNI_TARGET inline Requantization16 broadcast(const Requantization& r) {
  return {_mm512_set1_ps(r.low),
          _mm512_set1_ps(r.high),
          _mm512_set1_epi32(r.zero_point),
          _mm512_set1_epi16(static_cast<int16_t>(r.zero_point)),
          _mm512_set1_epi8(
              static_cast<char>(static_cast<int32_t>(r.low) + r.zero_point))};
}

// requantize() of 16 sums with their 16 scales, as 16 bytes.
ET_QS8_VNNI_TARGET inline __m128i requantize16(__m512i acc,
                                               __m512 scale,
                                               const Requantization16& r) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), scale);
  v = _mm512_min_ps(_mm512_max_ps(v, r.low), r.high);
  // Rounds to nearest even (the default MXCSR mode), as nearbyint.
  return _mm512_cvtsepi32_epi8(
      _mm512_add_epi32(_mm512_cvtps_epi32(v), r.zero_point));
}

// requantize() of four vectors of 16 sums (acc[i] with scale[i]) as 64
// bytes, in the order the packing instructions leave them: 128-bit lane j
// holds lanes 4j..4j+3 of acc[0], then of acc[1], acc[2], acc[3] (each
// four bytes). Cheaper per byte than requantize16: the upper clamp in
// float (cvtps2dq cannot overflow below it), then saturating packs, the
// zero point added in 16 bits and the lower clamp on the bytes, which
// gives requantize()'s value exactly: rounding is monotonic and both
// bounds are integers, so clamping before or after it is the same, and the
// saturations only move values below the lower bound.
ET_QS8_VNNI_TARGET inline __m512i requantize64(const __m512i* acc,
                                               const __m512* scale,
                                               const Requantization16& r) {
  __m512i q[4];
  for (int i = 0; i < 4; ++i) {
    const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc[i]), scale[i]);
    q[i] = _mm512_cvtps_epi32(_mm512_min_ps(v, r.high));
  }
  const __m512i lo =
      _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), r.zero_point16);
  const __m512i hi =
      _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), r.zero_point16);
  return _mm512_max_epi8(_mm512_packs_epi16(lo, hi), r.min8);
}

// The mask of the first `n` (at most 16) lanes.
inline __mmask16 first_lanes(size_t n) {
  return static_cast<__mmask16>((1u << n) - 1);
}

// The mask of the first min(n, 64) bytes.
inline __mmask64 first_bytes(size_t n) {
  return n >= 64 ? ~__mmask64(0) : (__mmask64(1) << n) - 1;
}
#endif

} // namespace qs8

} // namespace xnnpack
} // namespace backends
} // namespace executorch
