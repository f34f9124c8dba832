#include <executorch/kernels/optimized/blas/gemm.h>

#include <algorithm>
#include <cstring>

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/cpu/strided_copy.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

// Blocking: a kKc x kNr B panel (16 KB with AVX2) stays in L1 while the
// microkernel runs over all A panels of a row block; a row block's packed A
// (at most kMc x kKc, 144 KB) stays in L2; a tile's packed B (kKc x kNc) in
// L2 or L3 while the tile's row blocks run against it.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 144;
constexpr int64_t kNc = 512;
constexpr size_t kAlignFloats = 16; // 64 bytes

int64_t round_up(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

int64_t ceil_div(int64_t x, int64_t y) {
  return (x + y - 1) / y;
}

struct Blocking {
  int64_t mc; // rows per tile, a multiple of MR
  int64_t nc; // columns per tile, a multiple of NR
  int64_t kc;
  size_t chunk_floats; // one thread's packed A and B
};

Blocking blocking_for(int64_t m, int64_t n, int64_t k, const SimdKernels& s) {
  Blocking b;
  b.kc = std::max<int64_t>(1, std::min(k, kKc));
  b.mc = std::min(round_up(m, s.gemm_mr), kMc / s.gemm_mr * s.gemm_mr);
  b.nc = std::min(round_up(n, s.gemm_nr), kNc / s.gemm_nr * s.gemm_nr);
  b.chunk_floats = static_cast<size_t>(round_up(b.mc * b.kc, kAlignFloats) +
                                       round_up(b.nc * b.kc, kAlignFloats));
  return b;
}

// Packs a block of `count` lines by kc steps into panels of `width` lines:
// panel p holds, for each k < kc, lines p * width + w (w < width) at step k,
// that is data[(p * width + w) * line_stride + k * step_stride], lines past
// `count` as 0. A's panels are rows of A, B's columns of B.
void pack_panels(const float* data,
                 int64_t line_stride,
                 int64_t step_stride,
                 int64_t count,
                 int64_t kc,
                 int64_t width,
                 float* dst) {
  for (int64_t p = 0; p < count; p += width) {
    const int64_t live = std::min(width, count - p);
    const float* src = data + p * line_stride;
    if (line_stride == 1) {
      // Each step holds the panel's lines contiguously.
      for (int64_t k = 0; k < kc; ++k) {
        std::memcpy(
            dst + k * width, src + k * step_stride, live * sizeof(float));
      }
    } else if (step_stride == 1) {
      // Each line is contiguous (a convolution's weight as A, a linear's
      // as B): the panel is the transpose of a live x kc block.
      transpose_floats(src, line_stride, live, kc, dst, width);
    } else {
      for (int64_t w = 0; w < live; ++w) {
        for (int64_t k = 0; k < kc; ++k) {
          dst[k * width + w] = src[w * line_stride + k * step_stride];
        }
      }
    }
    if (live < width) {
      for (int64_t k = 0; k < kc; ++k) {
        std::fill(dst + k * width + live, dst + (k + 1) * width, 0.0f);
      }
    }
    dst += kc * width;
  }
}

// Writes `count` consecutive entries of one im2col row, for the kernel
// tap (kh, kw) of `channel`, starting at output position p = (oh, ow). It
// goes one output row at a time: zeros where the tap falls above, below,
// left or right of the image, the image row in between (a memcpy at unit
// stride), so no entry pays for a division or a bounds check.
void im2col_run(const Im2colView& v,
                const float* channel,
                int64_t kh,
                int64_t kw,
                int64_t p,
                int64_t count,
                float* out) {
  int64_t oh = p / v.out_w;
  int64_t ow = p % v.out_w;
  const int64_t x_shift = kw * v.dilation_w - v.pad_w;
  // Output columns whose input column is inside the image:
  // 0 <= ow * step_w + x_shift < width.
  const int64_t inside_lo = x_shift >= 0 ? 0 : ceil_div(-x_shift, v.step_w);
  const int64_t inside_hi =
      x_shift >= v.width
          ? 0
          : std::min(v.out_w, (v.width - 1 - x_shift) / v.step_w + 1);
  const bool unit_stride = v.step_w == 1 && v.stride_w == 1;
  while (count > 0) {
    const int64_t run = std::min(count, v.out_w - ow);
    const int64_t y = oh * v.step_h - v.pad_h + kh * v.dilation_h;
    const int64_t lo = std::clamp(inside_lo, ow, ow + run);
    const int64_t hi = std::clamp(inside_hi, lo, ow + run);
    if (y < 0 || y >= v.height || lo == hi) {
      std::fill(out, out + run, 0.0f);
    } else {
      const float* row = channel + y * v.stride_h;
      std::fill(out, out + (lo - ow), 0.0f);
      float* middle = out + (lo - ow);
      if (unit_stride) {
        std::memcpy(middle, row + lo + x_shift, (hi - lo) * sizeof(float));
      } else if (v.step_w == 2 && v.stride_w == 1) {
        copy_every_other_float(row + 2 * lo + x_shift, hi - lo, middle);
      } else {
        for (int64_t x = lo; x < hi; ++x) {
          middle[x - lo] = row[(x * v.step_w + x_shift) * v.stride_w];
        }
      }
      std::fill(out + (hi - ow), out + run, 0.0f);
    }
    out += run;
    count -= run;
    ow = 0;
    ++oh;
  }
}

// pack_panels of B for the im2col matrix: B(k, p) with k = (c,
// kh, kw) and p = (oh, ow) reads the image at (c, oh * step_h - pad_h + kh
// * dilation_h, ow * step_w - pad_w + kw * dilation_w), 0 outside it.
void pack_b_im2col(const Im2colView& v,
                   int64_t k0,
                   int64_t kc,
                   int64_t j0,
                   int64_t cols,
                   int64_t nr,
                   float* dst) {
  // One im2col row over all the tile's columns at a time (its runs are as
  // long as the output rows), then cut into the panels.
  float line[kNc];
  const int64_t padded = round_up(cols, nr);
  std::fill(line + cols, line + padded, 0.0f);
  const int64_t kernel_area = v.kernel_h * v.kernel_w;
  int64_t c = k0 / kernel_area;
  int64_t kh = k0 % kernel_area / v.kernel_w;
  int64_t kw = k0 % v.kernel_w;
  for (int64_t k = 0; k < kc; ++k) {
    im2col_run(v, v.image + c * v.stride_c, kh, kw, j0, cols, line);
    for (int64_t q = 0; q < padded; q += nr) {
      std::memcpy(dst + q * kc + k * nr,
                  line + q,
                  static_cast<size_t>(nr) * sizeof(float));
    }
    if (++kw == v.kernel_w) {
      kw = 0;
      if (++kh == v.kernel_h) {
        kh = 0;
        ++c;
      }
    }
  }
}

struct Problem {
  int64_t m, n, k;
  MatrixView a;
  const GemmB* b;
  float* c;
  int64_t ldc;
  const GemmEpilogue* epilogue;
  const SimdKernels* kernels;
  Blocking blocking;
};

bool epilogue_is_identity(const GemmEpilogue& e) {
  return e.alpha == 1.0f && e.bias == nullptr &&
         e.min == -std::numeric_limits<float>::infinity() &&
         e.max == std::numeric_limits<float>::infinity();
}

// C = clamp(alpha * C + bias_scale * bias) over one tile; with `product`
// false C holds no product yet (K == 0) and is overwritten. A row at a
// time with the vectorized elementwise loops: a per-row bias (a
// convolution's) is one affine pass, a contiguous one (a linear's) an add.
void apply_epilogue(const Problem& p,
                    int64_t m0,
                    int64_t mc,
                    int64_t n0,
                    int64_t nc,
                    bool product) {
  const GemmEpilogue& e = *p.epilogue;
  const SimdKernels& s = *p.kernels;
  const float alpha = product ? e.alpha : 1.0f;
  const bool clamp = e.min != -std::numeric_limits<float>::infinity() ||
                     e.max != std::numeric_limits<float>::infinity();
  for (int64_t i = m0; i < m0 + mc; ++i) {
    float* row = p.c + i * p.ldc + n0;
    if (!product) {
      std::fill(row, row + nc, 0.0f);
    }
    const float* bias = e.bias == nullptr
        ? nullptr
        : e.bias + i * e.bias_row_stride + n0 * e.bias_col_stride;
    if (bias != nullptr && e.bias_col_stride == 0) {
      s.unary(UnaryOp::kAffine, row, row, nc, alpha, e.bias_scale * *bias);
    } else {
      if (alpha != 1.0f) {
        s.unary(UnaryOp::kAffine, row, row, nc, alpha, 0.0f);
      }
      if (bias != nullptr && e.bias_col_stride == 1) {
        s.binary(BinaryOp::kAdd, row, 1, bias, 1, row, nc, e.bias_scale);
      } else if (bias != nullptr) {
        for (int64_t j = 0; j < nc; ++j) {
          row[j] += e.bias_scale * bias[j * e.bias_col_stride];
        }
      }
    }
    if (clamp) {
      s.unary(UnaryOp::kClamp, row, row, nc, e.min, e.max);
    }
  }
}

// One tile: rows [m0, m0 + rows) and columns [n0, n0 + nc), nc <= the
// blocking's. Each kc step packs the tile's B block once and then runs it
// against the tile's rows a block of at most mc at a time, so B is packed
// once however many rows the tile has.
void run_tile(const Problem& p,
              int64_t m0,
              int64_t rows,
              int64_t n0,
              int64_t nc,
              float* packed_a,
              float* packed_b) {
  const SimdKernels& s = *p.kernels;
  const int64_t mr = s.gemm_mr;
  const int64_t nr = s.gemm_nr;
  float edge[256]; // one MR x NR block; gemm_mr * gemm_nr <= 256
  const bool a_rows_in_place = p.a.col_stride == 1;
  for (int64_t k0 = 0; k0 < p.k; k0 += p.blocking.kc) {
    const int64_t kc = std::min(p.blocking.kc, p.k - k0);
    const float* b_block = packed_b;
    if (p.b->kind == GemmB::Kind::kPacked) {
      // Slices of blocking.kc steps over all columns' panels (sgemm_pack_b).
      b_block = p.b->packed + k0 * round_up(p.b->packed_columns, nr) +
                (p.b->first_column + n0) * kc;
    } else if (p.b->kind == GemmB::Kind::kMatrix) {
      const MatrixView& b = p.b->matrix;
      pack_panels(b.data + k0 * b.row_stride + n0 * b.col_stride,
                  b.col_stride,
                  b.row_stride,
                  nc,
                  kc,
                  nr,
                  packed_b);
    } else {
      pack_b_im2col(p.b->im2col, k0, kc, n0, nc, nr, packed_b);
    }
    const bool accumulate = k0 > 0;
    for (int64_t i0 = m0; i0 < m0 + rows; i0 += p.blocking.mc) {
      const int64_t mc = std::min(p.blocking.mc, m0 + rows - i0);
      const float* a_block =
          p.a.data + i0 * p.a.row_stride + k0 * p.a.col_stride;
      // Contiguous rows of A (a convolution's weight, a linear's input)
      // are read in place, a ragged last panel by the few-rows kernel
      // (only its live rows: a one-row product computes one row); strided
      // rows are packed, a ragged last panel with zero rows.
      const int64_t unpacked = a_rows_in_place ? mc : 0;
      pack_panels(a_block + unpacked * p.a.row_stride,
                  p.a.row_stride,
                  p.a.col_stride,
                  mc - unpacked,
                  kc,
                  mr,
                  packed_a);
      for (int64_t j = 0; j < nc; j += nr) {
        const int64_t live_cols = std::min(nr, nc - j);
        const float* b_panel = b_block + j / nr * kc * nr;
        for (int64_t i = 0; i < mc; i += mr) {
          const int64_t live_rows = std::min(mr, mc - i);
          const bool in_place = i < unpacked;
          const float* a_panel = in_place
              ? a_block + i * p.a.row_stride
              : packed_a + (i - unpacked) / mr * kc * mr;
          float* c = p.c + (i0 + i) * p.ldc + n0 + j;
          float* dst =
              live_cols == nr && (live_rows == mr || in_place) ? c : edge;
          const int64_t ld = dst == c ? p.ldc : nr;
          const bool add = dst == c && accumulate;
          if (in_place) {
            s.gemm_microkernel_rows(
                kc, a_panel, p.a.row_stride, b_panel, dst, ld, add, live_rows);
          } else {
            s.gemm_microkernel(kc, a_panel, b_panel, dst, ld, add);
          }
          if (dst == c) {
            continue;
          }
          for (int64_t r = 0; r < live_rows; ++r) {
            for (int64_t col = 0; col < live_cols; ++col) {
              const float v = edge[r * nr + col];
              c[r * p.ldc + col] = accumulate ? c[r * p.ldc + col] + v : v;
            }
          }
        }
      }
    }
  }
  if (!epilogue_is_identity(*p.epilogue) || p.k == 0) {
    apply_epilogue(p, m0, rows, n0, nc, p.k > 0);
  }
}

} // namespace

size_t sgemm_packed_b_floats(int64_t n, int64_t k) {
  return static_cast<size_t>(round_up(n, simd().gemm_nr) * k);
}

void sgemm_pack_b(int64_t n, int64_t k, MatrixView b, float* packed) {
  const SimdKernels& s = simd();
  // The blocking's kc, which depends on k alone.
  const int64_t slice = blocking_for(1, n, k, s).kc;
  for (int64_t k0 = 0; k0 < k; k0 += slice) {
    const int64_t kc = std::min(slice, k - k0);
    pack_panels(b.data + k0 * b.row_stride,
                b.col_stride,
                b.row_stride,
                n,
                kc,
                s.gemm_nr,
                packed + k0 * round_up(n, s.gemm_nr));
  }
}

int64_t sgemm_panel_columns() {
  return simd().gemm_nr;
}

size_t sgemm_scratch_bytes(int64_t m, int64_t n, int64_t k) {
  const Blocking b = blocking_for(m, n, k, simd());
  const int64_t threads = ::executorch::extension::get_thread_count();
  return (b.chunk_floats * static_cast<size_t>(threads) + kAlignFloats) *
         sizeof(float);
}

bool sgemm(int64_t m,
           int64_t n,
           int64_t k,
           MatrixView a,
           const GemmB& b,
           float* c,
           int64_t ldc,
           const GemmEpilogue& epilogue,
           void* scratch,
           size_t scratch_bytes) {
  if (m <= 0 || n <= 0) {
    return true;
  }
  const SimdKernels& s = simd();
  Problem p{m, n, k, a, &b, c, ldc, &epilogue, &s, blocking_for(m, n, k, s)};
  if (scratch == nullptr ||
      scratch_bytes <
          (p.blocking.chunk_floats + kAlignFloats) * sizeof(float)) {
    return false;
  }
  // 64-byte aligned packed panels.
  float* base = reinterpret_cast<float*>(
      (reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
  scratch_bytes -= static_cast<size_t>(reinterpret_cast<char*>(base) -
                                       static_cast<char*>(scratch));
  // Tiles: a column block each (all rows: B is packed once), more when
  // threads would idle, and as many per thread: a count the threads do not
  // divide (MiniLM's 1152 or 1536 columns in 3 blocks of 512) takes
  // narrower column blocks up to the next multiple.
  const int64_t macs = m * n * std::max<int64_t>(k, 1);
  const int64_t max_chunks =
      static_cast<int64_t>(scratch_bytes / sizeof(float) /
                           std::max<size_t>(p.blocking.chunk_floats, 1));
  const int64_t threads =
      std::max<int64_t>(1,
                        std::min({::executorch::extension::get_thread_count(),
                                  max_chunks,
                                  macs / kGemmGrainMacs}));
  const int64_t row_panels = ceil_div(m, s.gemm_mr);
  const int64_t col_panels = ceil_div(n, s.gemm_nr);
  int64_t m_tiles = 1;
  int64_t n_tiles = ceil_div(n, p.blocking.nc);
  while (m_tiles * n_tiles < threads) {
    const int64_t rows_per_tile = ceil_div(m, m_tiles);
    const int64_t cols_per_tile = ceil_div(n, n_tiles);
    if (cols_per_tile > s.gemm_nr &&
        (cols_per_tile / s.gemm_nr >= rows_per_tile / s.gemm_mr)) {
      ++n_tiles;
    } else if (rows_per_tile > s.gemm_mr) {
      ++m_tiles;
    } else {
      break;
    }
  }
  if (m_tiles * n_tiles % threads != 0 &&
      round_up(n_tiles, threads) <= col_panels) {
    n_tiles = round_up(n_tiles, threads);
  }
  // Tile boundaries on multiples of MR / NR, the panels spread evenly:
  // tiles differ by at most one panel, the last (possibly ragged) tile is
  // among the smaller ones, and none is wider than the blocking's nc.
  const int64_t tiles = m_tiles * n_tiles;
  ::executorch::extension::parallel_for(
      0, tiles, ceil_div(tiles, threads), [&](int64_t begin, int64_t end) {
        float* chunk = base + ::executorch::extension::get_thread_num() *
                                  p.blocking.chunk_floats;
        float* packed_a = chunk;
        float* packed_b =
            chunk + round_up(p.blocking.mc * p.blocking.kc, kAlignFloats);
        for (int64_t t = begin; t < end; ++t) {
          const int64_t mt = t / n_tiles;
          const int64_t nt = t % n_tiles;
          const int64_t m0 =
              first_panel_of_part(mt, m_tiles, row_panels) * s.gemm_mr;
          const int64_t m1 = std::min(
              m, first_panel_of_part(mt + 1, m_tiles, row_panels) * s.gemm_mr);
          const int64_t n0 =
              first_panel_of_part(nt, n_tiles, col_panels) * s.gemm_nr;
          const int64_t n1 = std::min(
              n, first_panel_of_part(nt + 1, n_tiles, col_panels) * s.gemm_nr);
          run_tile(p, m0, m1 - m0, n0, n1 - n0, packed_a, packed_b);
        }
      });
  return true;
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
