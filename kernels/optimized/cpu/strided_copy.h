#pragma once

// Copies a strided view of a tensor into a contiguous buffer, for the
// layout operators (permute, transpose, clone): dims are coalesced first,
// then the copy is contiguous runs (memcpy) when the innermost dim is
// contiguous in the input, or a transpose in cache-sized tiles when another
// dim is, spread over the thread pool. Any element type of 1, 2, 4 or 8
// bytes; the bytes are copied, never converted.

#include <cstddef>
#include <cstdint>

namespace executorch {
namespace kernels {
namespace optimized {

// out (contiguous, `sizes`) at row-major index (i0, ..., ik) = the element
// of `in` at sum(ij * in_strides[j]) (strides in elements, >= 0). Returns
// false, copying nothing, when it does not take the case (rank over 16,
// an element size it does not handle, no dim contiguous in the input);
// the caller then takes its general path.
bool copy_strided_to_contiguous(const void* in,
                                const int64_t* in_strides,
                                const int64_t* sizes,
                                size_t rank,
                                size_t element_size,
                                void* out);

// dst[i] = src[2 * i] for i < n, reading nothing past src[2 * n - 2]: the
// columns a stride-2 convolution reads, the even lanes of 4-float loads in
// SSE registers where there are any.
void copy_every_other_float(const float* src, int64_t n, float* dst);

// out[c * out_stride + r] = in[r * in_stride + c] for r < rows, c < cols:
// a float matrix transposed on the calling thread, 4 x 4 blocks at a time in
// SSE registers where there are any. The GEMM packs panels of a row-major
// A (a convolution's weight) with it.
void transpose_floats(const float* in,
                      int64_t in_stride,
                      int64_t rows,
                      int64_t cols,
                      float* out,
                      int64_t out_stride);

} // namespace optimized
} // namespace kernels
} // namespace executorch
