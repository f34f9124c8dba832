#pragma once

// AVX-512 VNNI kernels of quantized_linear.h (x86-64 only; the caller
// checks the CPU has AVX-512 F/BW/VL/DQ and VNNI, see best_isa()).
//
// The dynamic linear multiplies int8 activations by 4/8-bit weights with
// vpdpbusd (u8 x s8, four products summed into each int32 lane): weights
// are the unsigned operand, as stored (quantized_linear.h's panel layout:
// 8-bit values + 128, 4-bit ones + 8, the low nibbles of a word before
// the high ones), activations the signed one, read in place, and per group
//
//   sum (xq - x_zp) (wq - c) = sum xq wq - x_zp sum wq - c sum (xq - x_zp)
//
// with c = 8 or 128 plus the weight's zero point, so the weight and
// activation sums make up for the offsets exactly in int32. A vector of
// the stored weights holds one word (4 bytes) of each of a panel's 16
// output features, multiplied by one broadcast word of an input row. Two
// kernels, neither of which copies the weights:
// - a GEMV for few input rows (decode), which streams the panels once,
//   each vector multiplied with every input row;
// - a GEMM for more rows (prefill, encoders), which multiplies two panels
//   at a time with 8 input rows (6 when the weights have several groups
//   per row, whose float sums also take registers).

#include <executorch/kernels/quantized/cpu/quantized_linear.h>

namespace torch {
namespace executor {
namespace native {
namespace quantized {
namespace vnni {

// Whether these kernels take `w`: K and the group size whole multiples of
// the values in a 32-bit word (8 of 4 bits, 4 of 8 bits).
bool supports(const PackedWeights& w);

size_t dynamic_scratch_bytes(const PackedWeights& w, int64_t rows_x);

// Checks the weight's quantization parameters as it goes
// (weight_rows_valid); false if some are invalid.
bool linear_dynamic(const QuantizedRows& x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    void* scratch);

bool find_min_max(const float* x, int64_t n, float* lo, float* hi);

void quantize_int8(const float* x,
                   int64_t n,
                   float inverse_scale,
                   int32_t zero_point,
                   int32_t qmin,
                   int32_t qmax,
                   int8_t* q);

} // namespace vnni
} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
