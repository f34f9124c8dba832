// optimized_winograd_layers: Winograd F(4x4, 3x3) (cpu/winograd.h) against
// the GEMM-based convolution (blas/gemm.h, a weight [out_c, in_c * 9] by
// the image's im2col matrix, as op_convolution.cpp runs it) on ResNet-18's
// 3x3 stride-1 layers, and shapes around the rule that picks Winograd
// (Winograd3x3::pays()), batch 1, one thread.
//
//   optimized_winograd_layers [--quick]
//
// Per layer, best of several runs in this thread's CPU time (the machine
// may be shared): the GEMM convolution (NCHW), Winograd's products and
// transforms on NHWC activations (what the XNNPACK delegate runs), its
// filter transform (the delegate does it once at load, the optimized kernel
// per call) and the NCHW <-> NHWC copies the optimized kernel adds; and the
// largest error of each against a double-precision direct convolution,
// relative to the output's largest |value|. A benchmark, not a test.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/cpu/strided_copy.h>
#include <executorch/kernels/optimized/cpu/winograd.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace opt = executorch::kernels::optimized;

namespace {

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Best CPU time of `runs` calls, in ms.
double best_ms(int runs, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const double start = thread_seconds();
    f();
    best = std::min(best, thread_seconds() - start);
  }
  return best * 1e3;
}

struct Layer {
  const char* name;
  int64_t channels, size;
};

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  executorch::extension::threadpool::get_threadpool()->_unsafe_reset_threadpool(
      1);
  const std::vector<Layer> layers =
      quick ? std::vector<Layer>{{"small", 16, 8}}
            : std::vector<Layer>{{"layer1 64x56x56", 64, 56},
                                 {"layer2 128x28x28", 128, 28},
                                 {"layer3 256x14x14", 256, 14},
                                 {"layer4 512x7x7", 512, 7},
                                 // Around Winograd3x3::pays()'s thresholds.
                                 {"8x56x56", 8, 56},
                                 {"16x56x56", 16, 56},
                                 {"32x28x28", 32, 28},
                                 {"64x8x8", 64, 8},
                                 {"128x7x7", 128, 7}};
  const int runs = quick ? 1 : 7;
  std::printf(
      "isa %s, 1 thread, thread CPU ms (best of %d); error: max |out - ref| / "
      "max |ref| vs a double direct convolution\n",
      opt::isa_name(opt::selected_isa()),
      runs);
  std::printf("%-18s %8s %9s %9s %9s %9s %10s %10s\n",
              "layer",
              "gemm",
              "winograd",
              "filter",
              "copies",
              "speedup",
              "gemm err",
              "wino err");
  std::mt19937 rng(0);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const Layer& l : layers) {
    const int64_t c = l.channels, s = l.size, pixels = s * s;
    std::vector<float> in(c * pixels), w(c * c * 9), bias(c);
    for (float& x : in) {
      x = std::max(dist(rng), 0.0f); // post-ReLU activations
    }
    for (float& x : w) {
      x = dist(rng) * std::sqrt(2.0f / (9.0f * c)); // He init
    }
    for (float& x : bias) {
      x = dist(rng) * 0.1f;
    }
    // NCHW reference in double.
    std::vector<double> ref(c * pixels);
    double ref_max = 0.0;
    for (int64_t k = 0; k < c; ++k) {
      for (int64_t y = 0; y < s; ++y) {
        for (int64_t x = 0; x < s; ++x) {
          double sum = bias[k];
          for (int64_t ci = 0; ci < c; ++ci) {
            for (int64_t ky = 0; ky < 3; ++ky) {
              const int64_t iy = y + ky - 1;
              if (iy < 0 || iy >= s) {
                continue;
              }
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t ix = x + kx - 1;
                if (ix >= 0 && ix < s) {
                  sum +=
                      static_cast<double>(w[((k * c + ci) * 3 + ky) * 3 + kx]) *
                      in[(ci * s + iy) * s + ix];
                }
              }
            }
          }
          ref[(k * s + y) * s + x] = sum;
          ref_max = std::max(ref_max, std::fabs(sum));
        }
      }
    }
    auto max_error = [&](const std::vector<float>& nchw) {
      double worst = 0.0;
      for (size_t i = 0; i < ref.size(); ++i) {
        worst = std::max(worst, std::fabs(nchw[i] - ref[i]));
      }
      return worst / ref_max;
    };

    // GEMM convolution.
    std::vector<float> gemm_out(c * pixels);
    opt::Im2colView view{};
    view.image = in.data();
    view.channels = c;
    view.height = view.width = s;
    view.stride_c = pixels;
    view.stride_h = s;
    view.stride_w = 1;
    view.kernel_h = view.kernel_w = 3;
    view.step_h = view.step_w = 1;
    view.pad_h = view.pad_w = 1;
    view.dilation_h = view.dilation_w = 1;
    view.out_h = view.out_w = s;
    opt::GemmEpilogue epilogue;
    epilogue.bias = bias.data();
    epilogue.bias_row_stride = 1;
    const size_t gemm_bytes = opt::sgemm_scratch_bytes(c, pixels, c * 9);
    std::vector<char> gemm_scratch(gemm_bytes);
    const double gemm_ms = best_ms(runs, [&] {
      opt::sgemm(c,
                 pixels,
                 c * 9,
                 opt::MatrixView{w.data(), c * 9, 1},
                 opt::GemmB::im2col_of(view),
                 gemm_out.data(),
                 pixels,
                 epilogue,
                 gemm_scratch.data(),
                 gemm_bytes);
    });

    // Winograd on NHWC.
    std::vector<float> in_nhwc(c * pixels), out_nhwc(c * pixels),
        wino_out(c * pixels);
    const int64_t to_nhwc_strides[3] = {s, 1, pixels};
    const int64_t nhwc_sizes[3] = {s, s, c};
    const int64_t to_nchw_strides[3] = {1, s * c, c};
    const int64_t nchw_sizes[3] = {c, s, s};
    const double copies_ms = best_ms(runs, [&] {
      opt::copy_strided_to_contiguous(
          in.data(), to_nhwc_strides, nhwc_sizes, 3, 4, in_nhwc.data());
      opt::copy_strided_to_contiguous(
          out_nhwc.data(), to_nchw_strides, nchw_sizes, 3, 4, wino_out.data());
    });
    opt::Winograd3x3 wg;
    wg.init(c, c);
    std::vector<float> packed(wg.packed_floats() + 16);
    const double filter_ms = best_ms(runs, [&] {
      wg.pack(w.data(), c * 9, 9, 3, 1, bias.data(), packed.data());
    });
    opt::WinogradIo io;
    io.in = in_nhwc.data();
    io.in_sn = io.out_sn = pixels * c;
    io.in_sh = io.out_sh = s * c;
    io.in_sw = io.out_sw = c;
    io.out = out_nhwc.data();
    io.batch = 1;
    io.in_h = io.in_w = io.out_h = io.out_w = s;
    io.pad_top = io.pad_left = 1;
    std::vector<char> scratch(wg.scratch_bytes(io, 1) + 64);
    void* aligned = reinterpret_cast<void*>(
        (reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
    const int64_t tasks = wg.tasks(io, 1);
    const double wino_ms = best_ms(runs, [&] {
      for (int64_t t = 0; t < tasks; ++t) {
        wg.run(io, 1, t, aligned);
      }
    });
    opt::copy_strided_to_contiguous(
        out_nhwc.data(), to_nchw_strides, nchw_sizes, 3, 4, wino_out.data());
    std::printf("%-18s %8.3f %9.3f %9.3f %9.3f %8.2fx %10.2e %10.2e\n",
                l.name,
                gemm_ms,
                wino_ms,
                filter_ms,
                copies_ms,
                gemm_ms / wino_ms,
                max_error(gemm_out),
                max_error(wino_out));
  }
  return 0;
}
