#pragma once

// sgemm: C = alpha * A * B + bias_scale * bias, then clamped, for float32,
// cache-blocked and threaded. A is M x K and B is K x N, each given by
// strides (any transposition or permuted view), B alternatively as the
// im2col matrix of an image (a convolution as one GEMM, without the im2col
// buffer), or packed once ahead of the calls (sgemm_pack_b: a layer's
// weights). C is row-major with row stride ldc.
//
// How: C is cut into tiles (blocks of at most kNc columns over all rows,
// or over a share of the rows when threads would idle; narrower blocks
// when the threads do not divide their count); a tile is one task of
// parallel_for on the process-wide pool. For each kKc-deep
// slice of K a task packs its A rows and B columns into panels (scratch)
// and runs the microkernel of the chosen instruction set (simd/isa.h)
// over them. Scratch comes from the caller: sgemm_scratch_bytes() says how
// much; no heap is touched.

#include <cstddef>
#include <cstdint>
#include <limits>

namespace executorch {
namespace kernels {
namespace optimized {

// Element (i, j) is data[i * row_stride + j * col_stride].
struct MatrixView {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
};

// The im2col matrix of one image for a 2-D convolution: row k = (c, kh, kw)
// in that order, column p = (oh, ow); entries outside the image are 0.
struct Im2colView {
  const float* image; // channel c, row y, column x at
                      // image[c * stride_c + y * stride_h + x * stride_w]
  int64_t channels, height, width;
  int64_t stride_c, stride_h, stride_w;
  int64_t kernel_h, kernel_w;
  int64_t step_h, step_w; // convolution stride
  int64_t pad_h, pad_w;
  int64_t dilation_h, dilation_w;
  int64_t out_h, out_w;
};

struct GemmB {
  enum class Kind { kMatrix, kIm2col, kPacked };
  Kind kind;
  MatrixView matrix;
  Im2colView im2col;
  // kPacked: what sgemm_pack_b wrote for packed_columns columns; this
  // GEMM's B is its columns from first_column on (a multiple of
  // sgemm_panel_columns()).
  const float* packed = nullptr;
  int64_t packed_columns = 0;
  int64_t first_column = 0;

  static GemmB matrix_of(MatrixView m) {
    return GemmB{Kind::kMatrix, m, {}};
  }
  static GemmB im2col_of(const Im2colView& v) {
    return GemmB{Kind::kIm2col, {}, v};
  }
  static GemmB packed_of(const float* panels,
                         int64_t packed_columns,
                         int64_t first_column) {
    return GemmB{Kind::kPacked, {}, {}, panels, packed_columns, first_column};
  }
};

struct GemmEpilogue {
  float alpha = 1.0f;
  // bias(i, j) = bias[i * bias_row_stride + j * bias_col_stride]: a stride
  // of 0 broadcasts (a linear's bias has row stride 0, a convolution's
  // column stride 0). Null for none.
  const float* bias = nullptr;
  int64_t bias_row_stride = 0;
  int64_t bias_col_stride = 0;
  float bias_scale = 1.0f;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};

// Where part `part` of `parts` starts when `panels` panels (MR rows or NR
// columns) are spread evenly over them: parts differ by at most one panel,
// the first ones taking the extra, so a ragged last panel lands in a
// smaller part. How sgemm cuts its tiles, and batch matmul a batch's rows.
inline int64_t first_panel_of_part(int64_t part,
                                   int64_t parts,
                                   int64_t panels) {
  return (panels * part + parts - 1) / parts;
}

// A constant B (a layer's weights) packed once into the panels sgemm would
// otherwise pack on every call: sgemm_packed_b_floats(n, k) floats for a K x
// N matrix, 64-byte aligned for the microkernels' loads, valid in this
// process (the panel width is the instruction set's, picked at start-up)
// for calls with the same n and k.
size_t sgemm_packed_b_floats(int64_t n, int64_t k);
void sgemm_pack_b(int64_t n, int64_t k, MatrixView b, float* packed);
// The columns of one packed panel.
int64_t sgemm_panel_columns();

// Scratch sgemm needs for these sizes, for any number of threads up to the
// pool's at the time of the call.
size_t sgemm_scratch_bytes(int64_t m, int64_t n, int64_t k);

// C = clamp(alpha * A * B + bias_scale * bias). `scratch` should hold
// sgemm_scratch_bytes(m, n, k) bytes (fewer threads run when the pool has
// grown since that size was computed); returns false, computing nothing,
// when it is too small for even one thread. K == 0 gives the bias term
// alone.
bool sgemm(int64_t m,
           int64_t n,
           int64_t k,
           MatrixView a,
           const GemmB& b,
           float* c,
           int64_t ldc,
           const GemmEpilogue& epilogue,
           void* scratch,
           size_t scratch_bytes);

} // namespace optimized
} // namespace kernels
} // namespace executorch
