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
// - int8 quantized per call (dynamic quantization): the caller gives each
//   input row as int16 values with their zero point already subtracted and
//   one scale per row; products of a group sum exactly in int32, and only
//   the group sums are scaled in float.
//
// Packed layout (ours; what the compiler's fusion pass writes): row n of
// an 8-bit weight is K int8 values; of a 4-bit one, K / 2 bytes, value 2j in
// the high nibble of byte j and 2j + 1 in the low one, each stored + 8 (the
// layout of upstream's embedding_4bit tables).
//
// x86-64 builds run AVX2/FMA loops when the CPU has them (checked once at
// run time) and portable loops otherwise; both give the same results up to
// float summation order. Work is split by output column, over threads (see
// scratch_slices()); the functions are reentrant.

#include <cstddef>
#include <cstdint>

namespace torch {
namespace executor {
namespace native {
namespace quantized {

struct PackedWeights {
  const uint8_t* data;
  int bits; // 4 or 8
  int64_t rows; // N (output features)
  int64_t cols; // K (input features)
  int64_t group_size; // divides cols; for 4-bit also even
  const float* scales; // [rows, cols / group_size]
  const int8_t* zero_points; // same shape, or null for zeros
};

// Weight rows unpacked together: each input row is read from cache once
// per block rather than once per output feature.
constexpr int64_t kRowBlock = 8;

// The functions below split their output features over the process-wide
// thread pool (extension/threadpool, when the build has it), in at most
// kMaxThreads runs (the scratch, from the method's temp memory, grows with
// them); each run unpacks weights into its own slice of the scratch. The
// number of slices a scratch needs: the pool's thread count up to
// kMaxThreads, 1 without a pool.
constexpr int64_t kMaxThreads = 4;
size_t scratch_slices();

// Bytes of one thread's slice of `linear_weight_only`'s scratch, and of
// the whole scratch.
inline size_t weight_only_slice_bytes(const PackedWeights& w) {
  return static_cast<size_t>(kRowBlock * w.cols) *
      (sizeof(float) + sizeof(int16_t));
}
inline size_t weight_only_scratch_bytes(const PackedWeights& w) {
  return weight_only_slice_bytes(w) * scratch_slices();
}

// y[m, n] = sum_k x[m, k] W[n, k] + bias[n] for m < rows_x; bias may be null.
void linear_weight_only(const float* x,
                        int64_t rows_x,
                        const PackedWeights& w,
                        const float* bias,
                        float* y,
                        void* scratch);

// Bytes of one thread's slice of `linear_dynamic`'s scratch, and of the
// whole scratch.
inline size_t dynamic_slice_bytes(const PackedWeights& w) {
  return static_cast<size_t>(kRowBlock * w.cols) * sizeof(int16_t);
}
inline size_t dynamic_scratch_bytes(const PackedWeights& w) {
  return dynamic_slice_bytes(w) * scratch_slices();
}

// y[m, n] = x_scale[m] * sum_g scale[n, g] * sum_{k in g} xq[m, k] *
//           (q[n, k] - zero_point[n, g]) + bias[n]
// where xq[m, k] is the quantized activation minus its zero point (within
// [-255, 255]); bias may be null.
void linear_dynamic(const int16_t* xq,
                    const float* x_scales,
                    int64_t rows_x,
                    const PackedWeights& w,
                    const float* bias,
                    float* y,
                    int16_t* scratch);

// Turns the vector loops off (true restores them, where the CPU has
// them), so tests can check the portable loops on any machine. Not
// thread-safe: call it before running kernels.
void set_vector_loops_enabled(bool enabled);

} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
