#include <executorch/kernels/optimized/blas/gemm.h>

#include <algorithm>
#include <cstring>

#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

// Blocking: a kKc x kNr B panel (16 KB with AVX2) stays in L1 while the
// microkernel runs over all A panels of a tile; a tile's packed A (at most
// kMc x kKc, 144 KB) stays in L2; its packed B (kKc x kNc) in L2 or L3.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 144;
constexpr int64_t kNc = 512;
// A thread gets at least this many multiply-adds: below it, waking a
// worker costs more than it saves.
constexpr int64_t kMinMacsPerThread = int64_t{1} << 20;
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

// Packs rows [i0, i0 + rows) x columns [k0, k0 + kc) of A into panels of
// mr rows: panel p holds, for each k, A(i0 + p * mr + r, k) for r < mr,
// rows past the end as 0.
void pack_a(const MatrixView& a,
            int64_t i0,
            int64_t rows,
            int64_t k0,
            int64_t kc,
            int64_t mr,
            float* dst) {
  for (int64_t p = 0; p < rows; p += mr) {
    const int64_t live = std::min(mr, rows - p);
    if (a.row_stride == 1) {
      // Column-major A: each k holds the panel's rows contiguously.
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = a.data + (i0 + p) + (k0 + k) * a.col_stride;
        std::memcpy(dst + k * mr, src, live * sizeof(float));
        std::fill(dst + k * mr + live, dst + (k + 1) * mr, 0.0f);
      }
    } else {
      for (int64_t r = 0; r < mr; ++r) {
        if (r >= live) {
          for (int64_t k = 0; k < kc; ++k) {
            dst[k * mr + r] = 0.0f;
          }
          continue;
        }
        const float* src =
            a.data + (i0 + p + r) * a.row_stride + k0 * a.col_stride;
        for (int64_t k = 0; k < kc; ++k) {
          dst[k * mr + r] = src[k * a.col_stride];
        }
      }
    }
    dst += kc * mr;
  }
}

// Packs rows [k0, k0 + kc) x columns [j0, j0 + cols) of B into panels of
// nr columns: panel q holds, for each k, B(k, j0 + q * nr + c) for c < nr,
// columns past the end as 0.
void pack_b_matrix(const MatrixView& b,
                   int64_t k0,
                   int64_t kc,
                   int64_t j0,
                   int64_t cols,
                   int64_t nr,
                   float* dst) {
  for (int64_t q = 0; q < cols; q += nr) {
    const int64_t live = std::min(nr, cols - q);
    if (b.col_stride == 1) {
      for (int64_t k = 0; k < kc; ++k) {
        const float* src = b.data + (k0 + k) * b.row_stride + j0 + q;
        std::memcpy(dst + k * nr, src, live * sizeof(float));
        std::fill(dst + k * nr + live, dst + (k + 1) * nr, 0.0f);
      }
    } else {
      // Transposed B (a linear's weight): each column is contiguous in k
      // when row_stride is 1.
      for (int64_t c = 0; c < nr; ++c) {
        if (c >= live) {
          for (int64_t k = 0; k < kc; ++k) {
            dst[k * nr + c] = 0.0f;
          }
          continue;
        }
        const float* src =
            b.data + k0 * b.row_stride + (j0 + q + c) * b.col_stride;
        for (int64_t k = 0; k < kc; ++k) {
          dst[k * nr + c] = src[k * b.row_stride];
        }
      }
    }
    dst += kc * nr;
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

// The same as pack_b_matrix for the im2col matrix: B(k, p) with k = (c,
// kh, kw) and p = (oh, ow) reads the image at (c, oh * step_h - pad_h + kh
// * dilation_h, ow * step_w - pad_w + kw * dilation_w), 0 outside it.
void pack_b_im2col(const Im2colView& v,
                   int64_t k0,
                   int64_t kc,
                   int64_t j0,
                   int64_t cols,
                   int64_t nr,
                   float* dst) {
  const int64_t kernel_area = v.kernel_h * v.kernel_w;
  for (int64_t q = 0; q < cols; q += nr) {
    const int64_t live = std::min(nr, cols - q);
    int64_t c = k0 / kernel_area;
    int64_t kh = k0 % kernel_area / v.kernel_w;
    int64_t kw = k0 % v.kernel_w;
    for (int64_t k = 0; k < kc; ++k) {
      float* out = dst + k * nr;
      im2col_run(v, v.image + c * v.stride_c, kh, kw, j0 + q, live, out);
      std::fill(out + live, out + nr, 0.0f);
      if (++kw == v.kernel_w) {
        kw = 0;
        if (++kh == v.kernel_h) {
          kh = 0;
          ++c;
        }
      }
    }
    dst += kc * nr;
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
// false C holds no product yet (K == 0) and is overwritten.
void apply_epilogue(const Problem& p,
                    int64_t m0,
                    int64_t mc,
                    int64_t n0,
                    int64_t nc,
                    bool product) {
  const GemmEpilogue& e = *p.epilogue;
  for (int64_t i = m0; i < m0 + mc; ++i) {
    float* row = p.c + i * p.ldc;
    for (int64_t j = n0; j < n0 + nc; ++j) {
      float v = product ? e.alpha * row[j] : 0.0f;
      if (e.bias != nullptr) {
        v += e.bias_scale *
             e.bias[i * e.bias_row_stride + j * e.bias_col_stride];
      }
      v = v < e.min ? e.min : v;
      row[j] = v > e.max ? e.max : v;
    }
  }
}

void run_tile(const Problem& p,
              int64_t m0,
              int64_t mc,
              int64_t n0,
              int64_t nc,
              float* packed_a,
              float* packed_b) {
  const SimdKernels& s = *p.kernels;
  const int64_t mr = s.gemm_mr;
  const int64_t nr = s.gemm_nr;
  float edge[256]; // one MR x NR block; gemm_mr * gemm_nr <= 256
  for (int64_t k0 = 0; k0 < p.k; k0 += p.blocking.kc) {
    const int64_t kc = std::min(p.blocking.kc, p.k - k0);
    if (p.b->kind == GemmB::Kind::kMatrix) {
      pack_b_matrix(p.b->matrix, k0, kc, n0, nc, nr, packed_b);
    } else {
      pack_b_im2col(p.b->im2col, k0, kc, n0, nc, nr, packed_b);
    }
    pack_a(p.a, m0, mc, k0, kc, mr, packed_a);
    const bool accumulate = k0 > 0;
    for (int64_t j = 0; j < nc; j += nr) {
      const int64_t live_cols = std::min(nr, nc - j);
      const float* b_panel = packed_b + j / nr * kc * nr;
      for (int64_t i = 0; i < mc; i += mr) {
        const int64_t live_rows = std::min(mr, mc - i);
        const float* a_panel = packed_a + i / mr * kc * mr;
        float* c = p.c + (m0 + i) * p.ldc + n0 + j;
        if (live_rows == mr && live_cols == nr) {
          s.gemm_microkernel(kc, a_panel, b_panel, c, p.ldc, accumulate);
          continue;
        }
        s.gemm_microkernel(kc, a_panel, b_panel, edge, nr, false);
        for (int64_t r = 0; r < live_rows; ++r) {
          for (int64_t col = 0; col < live_cols; ++col) {
            const float v = edge[r * nr + col];
            c[r * p.ldc + col] = accumulate ? c[r * p.ldc + col] + v : v;
          }
        }
      }
    }
  }
  if (!epilogue_is_identity(*p.epilogue) || p.k == 0) {
    apply_epilogue(p, m0, mc, n0, nc, p.k > 0);
  }
}

} // namespace

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
  // Tiles: as many as the block sizes need, more when threads would idle.
  const int64_t macs = m * n * std::max<int64_t>(k, 1);
  const int64_t max_chunks =
      static_cast<int64_t>(scratch_bytes / sizeof(float) /
                           std::max<size_t>(p.blocking.chunk_floats, 1));
  const int64_t threads =
      std::max<int64_t>(1,
                        std::min({::executorch::extension::get_thread_count(),
                                  max_chunks,
                                  macs / kMinMacsPerThread}));
  int64_t m_tiles = ceil_div(m, p.blocking.mc);
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
  // Tile boundaries on multiples of MR / NR, so only the last is ragged.
  const int64_t tile_rows = round_up(ceil_div(m, m_tiles), s.gemm_mr);
  const int64_t tile_cols = round_up(ceil_div(n, n_tiles), s.gemm_nr);
  m_tiles = ceil_div(m, tile_rows);
  n_tiles = ceil_div(n, tile_cols);
  const int64_t tiles = m_tiles * n_tiles;
  ::executorch::extension::parallel_for(
      0, tiles, ceil_div(tiles, threads), [&](int64_t begin, int64_t end) {
        float* chunk = base + ::executorch::extension::get_thread_num() *
                                  p.blocking.chunk_floats;
        float* packed_a = chunk;
        float* packed_b =
            chunk + round_up(p.blocking.mc * p.blocking.kc, kAlignFloats);
        for (int64_t t = begin; t < end; ++t) {
          const int64_t m0 = t / n_tiles * tile_rows;
          const int64_t n0 = t % n_tiles * tile_cols;
          run_tile(p,
                   m0,
                   std::min(tile_rows, m - m0),
                   n0,
                   std::min(tile_cols, n - n0),
                   packed_a,
                   packed_b);
        }
      });
  return true;
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
