#pragma once

// vpdpbusd for the int8 kernels' register tiles (kernels/quantized's
// dynamic linear, the XNNPACK delegate's host convolutions), x86-64 only.
//
// With the intrinsic (_mm512_dpbusd_epi32) in an unrolled tile of
// accumulators, GCC 12 moves each accumulator to another register and back
// around every product: two copies per vpdpbusd, so that the front end,
// not the multiplier, set the pace (a 6x2 tile: 12 products, 24 copies per
// step). As a statement with the accumulator as an in-out operand, the
// accumulators stay where they are.

#if defined(__x86_64__)

#include <immintrin.h>

namespace executorch {
namespace kernels {
namespace vnni {

// acc + the sums of four products of u8's unsigned bytes with s8's signed
// ones, per 32-bit lane (_mm512_dpbusd_epi32(acc, u8, s8)).
__attribute__((target("avx512f,avx512vnni"), always_inline)) inline __m512i
dpbusd(__m512i acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
  return acc;
}

} // namespace vnni
} // namespace kernels
} // namespace executorch

#endif // __x86_64__
