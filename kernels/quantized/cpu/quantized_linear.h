#pragma once

// Linear layers on quantized weights: y = x W^T + b, with W stored as 4- or
// 8-bit integers in groups of `group_size` consecutive values of a row that
// share a scale (and a zero point):
//
//   W[n, k] = (q[n, k] - zero_point[n, g]) * scale[n, g],  g = k / group_size
//
// Two activation kinds:
// - fp32 (weight-only quantization): weight rows are dequantized once per
//   call, kRowBlock at a time, into a float buffer and multiplied with
//   every input row;
// - int8 quantized per call (dynamic quantization): each input row comes
//   as int8 values with its scale and zero point; the products of a group
//   sum exactly in int32, and only the group sums are scaled in float.
//
// Two packed layouts (ours; what the compiler's fusion pass writes):
// - rows, for the weight-only linear: row n of an 8-bit weight is K int8
//   values; of a 4-bit one, K / 2 bytes, value 2j in the high nibble of
//   byte j and 2j + 1 in the low one, each stored + 8 (the layout of
//   upstream's embedding_4bit tables);
// - panels, for the dynamic linear, which every kernel below reads as
//   stored (no copy per call): output features in panels of 16 (the last
//   one holds the rest), each feature's values in 4-byte words of
//   panel_word_values(bits) consecutive values (K padded with zeros to a
//   whole word), a panel word after word: word u of feature n0 + l (n0 a
//   multiple of 16, l < lanes = min(16, N - n0)) is the 4 bytes at
//   n0 * panel_row_bytes(bits, K) + u * lanes * 4 + l * 4.
//   8-bit values are stored + 128 (as uint8); 4-bit ones + 8, byte j of a
//   word holding value j in its low nibble and value 4 + j in its high
//   one. An AVX-512 VNNI vector is one word of a panel's 16 features.
//
// The instruction set is chosen once at run time (best_isa()): AVX-512
// VNNI kernels (quantized_linear_vnni.h) for the dynamic linear, AVX2/FMA
// loops, portable loops otherwise; all give the same results up to float
// summation order. Work is split by output feature over the process-wide
// thread pool (see scratch_slices()); the functions are reentrant.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/function_ref.h>

namespace torch {
namespace executor {
namespace native {
namespace quantized {

struct PackedWeights {
  const uint8_t* data;       // rows or panels (see above)
  int bits;                  // 4 or 8
  int64_t rows;              // N (output features)
  int64_t cols;              // K (input features)
  int64_t group_size;        // divides cols; for 4-bit also even
  const float* scales;       // [rows, cols / group_size]
  const int8_t* zero_points; // same shape, or null for zeros
};

// Values per 4-byte word in the panel layout, and bytes per output feature.
constexpr int64_t panel_word_values(int64_t bits) {
  return bits == 4 ? 8 : 4;
}
constexpr int64_t panel_row_bytes(int64_t bits, int64_t cols) {
  return (cols + panel_word_values(bits) - 1) / panel_word_values(bits) * 4;
}

// The instruction sets the loops are written for, in increasing order.
enum class Isa { kPortable, kAvx2, kAvx512Vnni };

// The best one this CPU has, within the limit set below.
Isa best_isa();

// Caps best_isa() (Isa::kAvx512Vnni restores the CPU's best), so tests can
// check every loop kind the CPU can run. Not thread-safe: call it before
// running kernels.
void set_isa_limit(Isa limit);

// Weight rows unpacked together: each input row is read from cache once
// per block rather than once per output feature.
constexpr int64_t kRowBlock = 8;

// The functions below split their output features over the process-wide
// thread pool (extension/threadpool, when the build has it), in at most
// kMaxThreads runs (the scratch, from the method's temp memory, grows with
// them); each run works in its own slice of the scratch. The number of
// slices a scratch needs: the pool's thread count up to kMaxThreads, 1
// without a pool.
constexpr int64_t kMaxThreads = 4;
size_t scratch_slices();

// Calls f(begin, end, slice) over contiguous runs covering [0, items) in
// order, on the thread pool: at most scratch_slices() runs, and fewer when
// a run would get under kMinRunWork multiply-adds (`work_per_item` each),
// since a dispatch costs more than a small run. `slice` numbers the run,
// and with it the part of a scratch the run may use. A decode GEMV streams
// 4-bit weights at ~30 GB/s, 256K multiply-adds in ~4 us, and a dispatch
// to the pool's awake worker costs ~0.5 us (extension/threadpool). 8da4w
// decode of a 124M Llama at 2 threads, ms per token, quiet machine, three
// alternating runs each: 2.68-2.78 with 2M, 2.06-2.46 with 256K, 2.08-2.87
// with 64K.
constexpr int64_t kMinRunWork = int64_t{1} << 18;
void split_over_threads(
    int64_t items,
    int64_t work_per_item,
    ::executorch::runtime::FunctionRef<void(int64_t, int64_t, int64_t)> f);

// Bytes of one thread's slice of `linear_weight_only`'s scratch, and of
// the whole scratch.
inline size_t weight_only_slice_bytes(const PackedWeights& w) {
  return static_cast<size_t>(kRowBlock * w.cols) *
         (sizeof(float) + sizeof(int16_t));
}
inline size_t weight_only_scratch_bytes(const PackedWeights& w) {
  return weight_only_slice_bytes(w) * scratch_slices();
}

// The linears below check the weight's scales (finite and > 0) and zero
// points (within [-8, 7] or [-128, 127]) themselves, a block of output
// features at a time just before they use them (the VNNI GEMV in the
// registers that carry them into the products), so that a call reads its
// quantization parameters once rather than in a pass of their own; they
// return false when some are invalid (y is then meaningless, the caller
// reports the error).

// Whether the scales and zero points of output features [begin, end) of
// `w` are valid (see above).
bool weight_rows_valid(const PackedWeights& w, int64_t begin, int64_t end);

// y[m, n] = sum_k x[m, k] W[n, k] + bias[n] for m < rows_x; bias may be
// null. `w` in the row layout.
bool linear_weight_only(const float* x,
                        int64_t rows_x,
                        const PackedWeights& w,
                        const float* bias,
                        float* y,
                        void* scratch);

// Input rows quantized to int8, each with its scale and zero point.
struct QuantizedRows {
  const int8_t* values;       // [rows, cols]
  const float* scales;        // [rows]
  const int32_t* zero_points; // [rows]
  int64_t rows;
};

// Bytes of `linear_dynamic`'s scratch (64-byte aligned) for `rows_x` input
// rows on the instruction set best_isa() picks.
size_t dynamic_scratch_bytes(const PackedWeights& w, int64_t rows_x);

// y[m, n] = x_scale[m] * sum_g scale[n, g] * sum_{k in g} (xq[m, k] -
//           x_zero_point[m]) * (q[n, k] - zero_point[n, g]) + bias[n];
// bias may be null. `w` in the panel layout.
bool linear_dynamic(const QuantizedRows& x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    void* scratch);

// Minimum and maximum of x[0, n) (+inf and -inf when n == 0); false if one
// is NaN.
bool find_min_max(const float* x, int64_t n, float* lo, float* hi);

// q[i] = clamp(round_half_even(x[i] * inverse_scale) + zero_point, qmin,
// qmax) for i < n, as torch's quantize_per_tensor computes it in float.
void quantize_int8(const float* x,
                   int64_t n,
                   float inverse_scale,
                   int32_t zero_point,
                   int32_t qmin,
                   int32_t qmax,
                   int8_t* q);

} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
