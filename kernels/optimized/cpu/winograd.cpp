#include <executorch/kernels/optimized/cpu/winograd.h>

#include <algorithm>

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

constexpr int64_t kTile = 4;   // output pixels per tile side
constexpr int64_t kWindow = 6; // input pixels per window side
constexpr int64_t kEntries = kWindow * kWindow;
// Input channels per microkernel call: a kKc x NR panel of U (32 KB with
// AVX-512) stays in L1 while the block's rows run against it, as in
// blas/gemm.cpp.
constexpr int64_t kKc = 256;
// A task's V and M (36 x tiles x channels each) stay in half a 2 MiB L2,
// leaving the rest to the U panels streaming through.
constexpr int64_t kBlockBytes = int64_t{1} << 20;
constexpr int64_t kAlignFloats = 16;
// The widest microkernel panel (AVX-512's NR is 32).
constexpr int64_t kMaxNr = 64;

int64_t ceil_div(int64_t x, int64_t y) {
  return (x + y - 1) / y;
}

int64_t round_up(int64_t x, int64_t multiple) {
  return ceil_div(x, multiple) * multiple;
}

} // namespace

std::atomic<int64_t>& winograd_convolutions_run() {
  static std::atomic<int64_t> count{0};
  return count;
}

bool Winograd3x3::pays(int64_t in_c, int64_t out_c, int64_t out_pixels) {
  return in_c >= 16 && out_c >= 16 && out_pixels >= 64;
}

bool Winograd3x3::init(int64_t in_c, int64_t out_c) {
  if (in_c <= 0 || out_c <= 0) {
    return false;
  }
  kernels_ = &simd();
  if (kernels_->gemm_nr > kMaxNr) {
    return false;
  }
  in_c_ = in_c;
  out_c_ = out_c;
  panels_ = ceil_div(out_c, kernels_->gemm_nr);
  packed_ = nullptr;
  return true;
}

size_t Winograd3x3::packed_floats() const {
  const int64_t nr = kernels_->gemm_nr;
  return static_cast<size_t>((kEntries * in_c_ + 1) * panels_ * nr);
}

void Winograd3x3::pack(const float* filter,
                       int64_t s_k,
                       int64_t s_c,
                       int64_t s_y,
                       int64_t s_x,
                       const float* bias,
                       float* packed) {
  const int64_t nr = kernels_->gemm_nr;
  const int64_t entry_floats = panels_ * in_c_ * nr;
  // One panel row (NR output channels of one input channel) at a time,
  // transformed into `rows` and written as 36 contiguous runs: writing
  // each filter's 36 entries where they go would touch 36 cache lines
  // (and pages) per filter. Panels are split across threads: the default
  // path packs on every call.
  ::executorch::extension::parallel_for(
      0,
      panels_,
      std::max<int64_t>(1, kCheapGrain / (in_c_ * nr * kEntries)),
      [&](int64_t begin, int64_t end) {
        float rows[kEntries * kMaxNr] = {};
        const float* filters[kMaxNr];
        for (int64_t p = begin; p < end; ++p) {
          const int64_t live = std::min(nr, out_c_ - p * nr);
          for (int64_t c = 0; c < in_c_; ++c) {
            for (int64_t j = 0; j < live; ++j) {
              filters[j] = filter + (p * nr + j) * s_k + c * s_c;
            }
            kernels_->winograd_filter(filters, live, s_y, s_x, rows, nr);
            for (int64_t e = 0; e < kEntries; ++e) {
              std::copy(rows + e * nr,
                        rows + (e + 1) * nr,
                        packed + e * entry_floats + (p * in_c_ + c) * nr);
            }
          }
        }
      });
  float* packed_bias = packed + kEntries * entry_floats;
  std::fill(packed_bias, packed_bias + panels_ * nr, 0.0f);
  if (bias != nullptr) {
    std::copy(bias, bias + out_c_, packed_bias);
  }
  packed_ = packed;
}

Winograd3x3::Plan Winograd3x3::plan(const WinogradIo& io,
                                    int64_t threads) const {
  const int64_t mr = kernels_->gemm_mr;
  const int64_t nr = kernels_->gemm_nr;
  Plan p;
  p.tiles_h = ceil_div(io.out_h, kTile);
  p.tiles_w = ceil_div(io.out_w, kTile);
  p.tiles = io.batch * p.tiles_h * p.tiles_w;
  if (p.tiles == 0) { // an empty output: no tasks
    p.block = mr;
    p.blocks = 0;
    p.panel_splits = 1;
    p.panels_per_split = panels_;
    return p;
  }
  // Threads that get at least a grain of products each.
  const int64_t macs = kEntries * p.tiles * in_c_ * out_c_;
  threads = std::max<int64_t>(
      1, std::min(threads, macs / std::max<int64_t>(kGemmGrainMacs, 1)));
  const int64_t per_tile_bytes =
      kEntries * static_cast<int64_t>(sizeof(float)) * (in_c_ + panels_ * nr);
  const int64_t largest_block =
      std::max(mr, kBlockBytes / per_tile_bytes / mr * mr);
  const int64_t row_panels = ceil_div(p.tiles, mr);
  p.blocks = ceil_div(p.tiles, largest_block);
  // As many blocks per thread, where the tiles allow.
  p.blocks = std::min(round_up(p.blocks, threads), row_panels);
  p.block = round_up(ceil_div(p.tiles, p.blocks), mr);
  p.blocks = ceil_div(p.tiles, p.block);
  // Too few blocks for the threads: split the output channels too.
  p.panel_splits =
      p.blocks >= threads ? 1 : std::min(panels_, ceil_div(threads, p.blocks));
  p.panels_per_split = ceil_div(panels_, p.panel_splits);
  p.panel_splits = ceil_div(panels_, p.panels_per_split);
  return p;
}

int64_t Winograd3x3::tasks(const WinogradIo& io, int64_t threads) const {
  const Plan p = plan(io, threads);
  return p.blocks * p.panel_splits;
}

size_t Winograd3x3::scratch_bytes(const WinogradIo& io, int64_t threads) const {
  const Plan p = plan(io, threads);
  const int64_t width = p.panels_per_split * kernels_->gemm_nr;
  const int64_t floats = round_up(kEntries * p.block * in_c_, kAlignFloats) +
                         round_up(kEntries * p.block * width, kAlignFloats) +
                         round_up(in_c_, kAlignFloats);
  return static_cast<size_t>(floats) * sizeof(float);
}

void Winograd3x3::run(const WinogradIo& io,
                      int64_t threads,
                      int64_t task,
                      void* scratch) const {
  const SimdKernels& s = *kernels_;
  const int64_t mr = s.gemm_mr;
  const int64_t nr = s.gemm_nr;
  const Plan p = plan(io, threads);
  const int64_t first_tile = task / p.panel_splits * p.block;
  const int64_t live = std::min(p.block, p.tiles - first_tile);
  const int64_t first_panel = task % p.panel_splits * p.panels_per_split;
  const int64_t panels = std::min(p.panels_per_split, panels_ - first_panel);
  const int64_t width = p.panels_per_split * nr; // M's row length
  float* v = static_cast<float*>(scratch);
  float* m = v + round_up(kEntries * p.block * in_c_, kAlignFloats);
  float* zeros = m + round_up(kEntries * p.block * width, kAlignFloats);
  std::fill(zeros, zeros + in_c_, 0.0f);
  // Where tile t of the block is: image n, output pixel (y0, x0).
  auto locate = [&](int64_t t, int64_t* n, int64_t* y0, int64_t* x0) {
    const int64_t tile = first_tile + t;
    const int64_t per_image = p.tiles_h * p.tiles_w;
    *n = tile / per_image;
    *y0 = tile % per_image / p.tiles_w * kTile;
    *x0 = tile % p.tiles_w * kTile;
  };

  // V: the input windows, transformed. Rows past the live tiles are zero
  // (the microkernel reads them; their products are dropped).
  const int64_t v_stride = p.block * in_c_;
  const float* window[kEntries];
  for (int64_t t = 0; t < live; ++t) {
    int64_t n, y0, x0;
    locate(t, &n, &y0, &x0);
    for (int64_t r = 0; r < kWindow; ++r) {
      const int64_t y = y0 - io.pad_top + r;
      for (int64_t c = 0; c < kWindow; ++c) {
        const int64_t x = x0 - io.pad_left + c;
        window[r * kWindow + c] =
            y < 0 || y >= io.in_h || x < 0 || x >= io.in_w
                ? zeros
                : io.in + n * io.in_sn + y * io.in_sh + x * io.in_sw;
      }
    }
    s.winograd_input(window, in_c_, v + t * in_c_, v_stride);
  }
  for (int64_t e = 0; e < kEntries; ++e) {
    std::fill(v + e * v_stride + live * in_c_, v + (e + 1) * v_stride, 0.0f);
  }

  // M[e] = V[e] U[e] over this task's output channel panels.
  const int64_t entry_floats = panels_ * in_c_ * nr;
  for (int64_t e = 0; e < kEntries; ++e) {
    const float* v_e = v + e * v_stride;
    float* m_e = m + e * p.block * width;
    for (int64_t c0 = 0; c0 < in_c_; c0 += kKc) {
      const int64_t kc = std::min(kKc, in_c_ - c0);
      for (int64_t j = 0; j < panels; ++j) {
        const float* b =
            packed_ + e * entry_floats + ((first_panel + j) * in_c_ + c0) * nr;
        for (int64_t t = 0; t < p.block; t += mr) {
          s.gemm_microkernel_rows(kc,
                                  v_e + t * in_c_ + c0,
                                  in_c_,
                                  b,
                                  m_e + t * width + j * nr,
                                  width,
                                  c0 > 0,
                                  mr);
        }
      }
    }
  }

  // The output: A^T M A + bias, clamped.
  const int64_t k0 = first_panel * nr;
  const int64_t channels = std::min(out_c_, (first_panel + panels) * nr) - k0;
  const float* bias = packed_ + kEntries * entry_floats + k0;
  float* pixels[kTile * kTile];
  for (int64_t t = 0; t < live; ++t) {
    int64_t n, y0, x0;
    locate(t, &n, &y0, &x0);
    for (int64_t r = 0; r < kTile; ++r) {
      for (int64_t c = 0; c < kTile; ++c) {
        const int64_t y = y0 + r;
        const int64_t x = x0 + c;
        pixels[r * kTile + c] =
            y >= io.out_h || x >= io.out_w
                ? nullptr
                : io.out + n * io.out_sn + y * io.out_sh + x * io.out_sw + k0;
      }
    }
    s.winograd_output(
        m + t * width, p.block * width, channels, bias, io.min, io.max, pixels);
  }
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
