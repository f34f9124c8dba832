#pragma once

// Masked loads and stores of a vector's first lanes, for the host kernels'
// vector loops (f32_dwconv_rows.cpp, f32_pointwise_rows.cpp): masked on
// AVX-512 and AVX2, through the stack on the portable build. Included only
// by sources built once per instruction set (after simd/vec.h).

#include <cstddef>
#include <cstdint>

#include <executorch/kernels/optimized/simd/vec.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {
inline namespace ET_OPT_ISA_NAMESPACE {

// The first n (< kLanes) floats at p, the rest 0.
inline __attribute__((always_inline)) kernels::optimized::simd::Vec load_first(
    const float* p, size_t n) {
#if ET_OPT_VECTOR_BYTES == 64 && defined(__AVX512F__)
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p);
#elif ET_OPT_VECTOR_BYTES == 32 && defined(__AVX2__)
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_maskload_ps(p, mask);
#else
  return kernels::optimized::simd::load_partial(p, static_cast<int64_t>(n));
#endif
}

// The first n (< kLanes) lanes of v to p.
inline __attribute__((always_inline)) void store_first(
    float* p, kernels::optimized::simd::Vec v, size_t n) {
#if ET_OPT_VECTOR_BYTES == 64 && defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v);
#elif ET_OPT_VECTOR_BYTES == 32 && defined(__AVX2__)
  const __m256i mask =
      _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _mm256_maskstore_ps(p, mask, v);
#else
  kernels::optimized::simd::store_partial(p, v, static_cast<int64_t>(n));
#endif
}

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace xnnpack
} // namespace backends
} // namespace executorch
