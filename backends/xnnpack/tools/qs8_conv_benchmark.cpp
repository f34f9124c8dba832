// qs8_conv_benchmark: speed of the host int8 convolutions (runtime/qs8_conv.h:
// one group; runtime/qs8_dwconv.h: depthwise) on the convolutions of two
// models at 224x224: MobileNetV2 (the stem, then each block's 1x1
// expansion, 3x3 depthwise and 1x1 projection, and the last 1x1) and
// ResNet-18 (the stem, the 3x3s and the 1x1 downsamplings), with random
// weights and inputs.
//
//   qs8_conv_benchmark [--quick] [--portable] [--layers]
//
// Per model: milliseconds of this thread's CPU time per forward of those
// convolutions on one thread (the sum over convolutions of the best of
// several runs each; a shared machine's waits do not count), split into
// 1x1, depthwise and other windows, and the multiply-adds per second.
// --layers also lists each convolution's time, beside the kernel's
// estimate of it (cost_ns: which calls the backend splits across threads).
// Uses the VNNI kernels where the CPU has them (--portable: the portable
// loops). A benchmark, not a test (its smoke run checks that it reports).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

#include <executorch/backends/xnnpack/runtime/qs8_conv.h>
#include <executorch/backends/xnnpack/runtime/qs8_dwconv.h>

namespace xnn = executorch::backends::xnnpack;

namespace {

struct Conv {
  size_t kernel, stride, in_channels, out_channels, in_size;
  bool depthwise = false;
};

size_t out_size(const Conv& c) {
  const size_t pad = c.kernel / 2;
  return (c.in_size + 2 * pad - c.kernel) / c.stride + 1;
}

std::vector<Conv> mobilenet_v2() {
  std::vector<Conv> convs = {{3, 2, 3, 32, 224}};
  // (expansion, out channels, blocks, first stride), after the stem.
  const size_t blocks[7][4] = {{1, 16, 1, 1},
                               {6, 24, 2, 2},
                               {6, 32, 3, 2},
                               {6, 64, 4, 2},
                               {6, 96, 3, 1},
                               {6, 160, 3, 2},
                               {6, 320, 1, 1}};
  size_t channels = 32, size = 112;
  for (const auto& b : blocks) {
    for (size_t i = 0; i < b[2]; ++i) {
      const size_t hidden = channels * b[0];
      if (b[0] != 1) {
        convs.push_back({1, 1, channels, hidden, size});
      }
      const size_t stride = i == 0 ? b[3] : 1;
      convs.push_back({3, stride, hidden, hidden, size, true});
      size = (size + stride - 1) / stride;
      convs.push_back({1, 1, hidden, b[1], size});
      channels = b[1];
    }
  }
  convs.push_back({1, 1, 320, 1280, 7});
  return convs;
}

std::vector<Conv> resnet18() {
  std::vector<Conv> convs = {{7, 2, 3, 64, 224}};
  size_t channels = 64, size = 56;
  for (size_t out : {64, 128, 256, 512}) {
    const size_t stride = out == 64 ? 1 : 2;
    convs.push_back({3, stride, channels, out, size});
    if (stride == 2) {
      convs.push_back({1, 2, channels, out, size});
    }
    size /= stride;
    for (int i = 0; i < 3; ++i) {
      convs.push_back({3, 1, out, out, size});
    }
    channels = out;
  }
  return convs;
}

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// The kernel's estimate of its time (cost_ns), in seconds.
double estimate(const xnn::Qs8Conv& conv, size_t /*in*/, size_t out) {
  return conv.cost_ns(1, out, out) * 1e-9;
}
double estimate(const xnn::Qs8DwConv& conv, size_t in, size_t out) {
  return conv.cost_ns(1, in, in, out, out) * 1e-9;
}

struct Timing {
  // The best of the runs, in seconds of this thread's CPU time, and the
  // kernel's estimate of it.
  double seconds = 0.0, estimate = 0.0;
};

// `repeats` runs of `c` on `Kernel`.
template <typename Kernel>
Timing time_conv(const Conv& c, bool vnni, int repeats, std::mt19937& rng) {
  xnn::Qs8ConvShape shape;
  shape.kernel_h = shape.kernel_w = c.kernel;
  shape.stride_h = shape.stride_w = c.stride;
  shape.pad_top = shape.pad_left = c.kernel / 2;
  shape.in_channels = c.in_channels;
  shape.out_channels = c.out_channels;
  std::uniform_int_distribution<int> byte(-128, 127);
  // Depthwise filters are [kernel, kernel, channels].
  std::vector<int8_t> filter(c.out_channels * c.kernel * c.kernel *
                             (c.depthwise ? 1 : c.in_channels));
  for (auto& v : filter) {
    v = static_cast<int8_t>(byte(rng));
  }
  std::vector<float> scales(c.out_channels, 1e-4f);
  xnn::Qs8ConvQuant quant;
  quant.input_scale = 0.02f;
  quant.input_zero_point = -3;
  quant.filter_scales = scales.data();
  quant.output_scale = 0.05f;
  Kernel conv;
  if (!conv.init(shape, quant, filter.data(), nullptr)) {
    std::fprintf(
        stderr, "init refused a %zux%zu convolution\n", c.kernel, c.kernel);
    return {};
  }
  std::vector<int8_t> in(c.in_size * c.in_size * c.in_channels);
  for (auto& v : in) {
    v = static_cast<int8_t>(byte(rng));
  }
  const size_t o = out_size(c);
  std::vector<int8_t> out(o * o * c.out_channels);
  double best = 1e9;
  for (int r = 0; r < repeats; ++r) {
    const double start = thread_seconds();
    conv.run(
        in.data(), 1, c.in_size, c.in_size, out.data(), o, o, nullptr, vnni);
    best = std::min(best, thread_seconds() - start);
  }
  return {best, estimate(conv, c.in_size, o)};
}

void report(const char* name,
            const std::vector<Conv>& convs,
            bool vnni,
            int repeats,
            bool layers) {
  std::mt19937 rng(1);
  double pointwise = 0, depthwise = 0, other = 0, macs = 0;
  for (const Conv& c : convs) {
    const Timing t = c.depthwise
                         ? time_conv<xnn::Qs8DwConv>(c, vnni, repeats, rng)
                         : time_conv<xnn::Qs8Conv>(c, vnni, repeats, rng);
    const double s = t.seconds;
    (c.depthwise ? depthwise : c.kernel == 1 ? pointwise : other) += s;
    const double o = static_cast<double>(out_size(c));
    const double m = o * o * c.out_channels * c.kernel * c.kernel *
                     (c.depthwise ? 1 : c.in_channels);
    macs += m;
    if (layers) {
      std::printf(
          "  %zux%zu%s /%zu %4zu -> %4zu at %3zu: %7.1f us (estimate %7.1f "
          "us), %5.1f G/s\n",
          c.kernel,
          c.kernel,
          c.depthwise ? " dw" : "   ",
          c.stride,
          c.in_channels,
          c.out_channels,
          c.in_size,
          s * 1e6,
          t.estimate * 1e6,
          m / s * 1e-9);
    }
  }
  const double total = pointwise + depthwise + other;
  std::printf(
      "%-13s %-8s %8.3f ms (1x1 %.3f, depthwise %.3f, other %.3f), %.1f G "
      "multiply-adds/s\n",
      name,
      vnni ? "vnni" : "portable",
      total * 1e3,
      pointwise * 1e3,
      depthwise * 1e3,
      other * 1e3,
      macs / total * 1e-9);
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false, portable = false, layers = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--portable") == 0) {
      portable = true;
    } else if (std::strcmp(argv[i], "--layers") == 0) {
      layers = true;
    } else {
      std::fprintf(
          stderr, "usage: %s [--quick] [--portable] [--layers]\n", argv[0]);
      return 2;
    }
  }
  const bool vnni = !portable && xnn::qs8::vnni_available();
  const int repeats = quick ? 1 : 20;
  std::printf(
      "# this thread's CPU ms per forward (best of %d per "
      "convolution)\n",
      repeats);
  report("mobilenet_v2", mobilenet_v2(), vnni, repeats, layers);
  report("resnet18", resnet18(), vnni, repeats, layers);
  return 0;
}
