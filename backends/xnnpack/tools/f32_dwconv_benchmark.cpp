// f32_dwconv_benchmark: the host fp32 depthwise 3x3 convolution
// (runtime/f32_dwconv.h) against Debian XNNPACK's depthwise convolution
// operator on MobileNetV2's depthwise layers at 224x224 (ReLU6, random
// weights and inputs), on one thread.
//
//   f32_dwconv_benchmark [--quick] [--cold]
//
// Per layer: microseconds of this thread's CPU time per call (the best of
// several runs; a shared machine's waits do not count), GFLOP/s, beside
// the kernel's estimate (cost_ns: which calls the backend splits across
// threads), for XNNPACK and for each row loop this CPU runs; then the
// totals over the network (layers counted as often as MobileNetV2 has
// them). `--quick`: one small round (the smoke test checks that it
// reports). `--cold`: each timed call starts with caches holding none of
// its data (64 MB written before it; up to 20 calls a round), as when a
// network's other layers pass between calls, instead of the warm caches of
// back-to-back calls. A benchmark, not a test.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/f32_dwconv.h>
#include <executorch/backends/xnnpack/tools/benchmark_util.h>

namespace xnn = executorch::backends::xnnpack;
using xnn::bench::best_of;

namespace {

struct Layer {
  size_t size, channels, stride, count;
};

// MobileNetV2's depthwise convolutions: input size, channels, stride, and
// how many the network has.
constexpr Layer kLayers[] = {{112, 32, 1, 1},
                             {112, 96, 2, 1},
                             {56, 144, 1, 1},
                             {56, 144, 2, 1},
                             {28, 192, 1, 2},
                             {28, 192, 2, 1},
                             {14, 384, 1, 4},
                             {14, 576, 1, 2},
                             {14, 576, 2, 1},
                             {7, 960, 1, 2}};

const char* name_of(xnn::Isa isa) {
  return isa == xnn::Isa::kAvx512 ? "avx512"
         : isa == xnn::Isa::kAvx2 ? "avx2"
                                  : "portable";
}

} // namespace

int main(int argc, char** argv) {
  const xnn::bench::Options options = xnn::bench::parse_options(argc, argv);
  const bool quick = options.quick, cold = options.cold;
  const size_t rounds = options.rounds;
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::fprintf(stderr, "xnn_initialize failed\n");
    return 1;
  }
  const std::vector<xnn::Isa> isas = xnn::F32DwConv::available_isas();
  std::printf("us of thread CPU time per call (GFLOP/s)\n%-22s %8s %12s",
              "layer (x count)",
              "estimate",
              "XNNPACK");
  for (xnn::Isa isa : isas) {
    std::printf(" %12s", name_of(isa));
  }
  std::printf("\n");
  std::vector<double> totals(isas.size() + 1, 0.0);
  double flops_total = 0;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (const Layer& l : kLayers) {
    const size_t size = quick ? std::min<size_t>(l.size, 14) : l.size;
    const size_t out = (size + 2 - 3) / l.stride + 1;
    std::vector<float> in(size * size * l.channels), filter(9 * l.channels),
        bias(l.channels), y(out * out * l.channels);
    for (auto* v : {&in, &filter, &bias})
      for (float& e : *v)
        e = normal(rng);
    const double flops = 2.0 * 9 * out * out * l.channels;
    const size_t calls = std::max<size_t>(1, quick ? 1 : size_t(2e8 / flops));
    std::vector<double> seconds;

    xnn_operator_t op = nullptr;
    if (xnn_create_convolution2d_nhwc_f32(1,
                                          1,
                                          1,
                                          1,
                                          3,
                                          3,
                                          l.stride,
                                          l.stride,
                                          1,
                                          1,
                                          l.channels,
                                          1,
                                          1,
                                          l.channels,
                                          l.channels,
                                          filter.data(),
                                          bias.data(),
                                          0.0f,
                                          6.0f,
                                          XNN_FLAG_DEPTHWISE_CONVOLUTION,
                                          &op) != xnn_status_success ||
        xnn_setup_convolution2d_nhwc_f32(
            op, 1, size, size, in.data(), y.data(), nullptr) !=
            xnn_status_success) {
      std::fprintf(stderr, "XNNPACK's depthwise convolution failed\n");
      return 1;
    }
    seconds.push_back(
        best_of(rounds, calls, cold, [&] { xnn_run_operator(op, nullptr); }));
    xnn_delete_operator(op);

    xnn::F32DwConvShape shape;
    shape.stride_h = shape.stride_w = l.stride;
    shape.pad_top = shape.pad_left = 1;
    shape.channels = l.channels;
    shape.output_min = 0.0f;
    shape.output_max = 6.0f;
    xnn::F32DwConv conv;
    if (!conv.init(shape, filter.data(), bias.data())) {
      std::fprintf(stderr, "F32DwConv::init failed\n");
      return 1;
    }
    for (xnn::Isa isa : isas) {
      seconds.push_back(best_of(rounds, calls, cold, [&] {
        conv.run(in.data(), 1, size, size, y.data(), out, out, nullptr, isa);
      }));
    }

    char name[32];
    std::snprintf(name,
                  sizeof(name),
                  "%zux%zu c%zu s%zu x%zu",
                  size,
                  size,
                  l.channels,
                  l.stride,
                  l.count);
    std::printf(
        "%-22s %8.1f", name, conv.cost_ns(1, size, size, out, out) / 1e3);
    for (size_t i = 0; i < seconds.size(); ++i) {
      std::printf(" %6.1f (%3.0f)", seconds[i] * 1e6, flops / seconds[i] / 1e9);
      totals[i] += seconds[i] * double(l.count);
    }
    std::printf("\n");
    flops_total += flops * double(l.count);
  }
  std::printf("%-22s %8s", "MobileNetV2 total", "");
  for (double t : totals) {
    std::printf(" %6.1f (%3.0f)", t * 1e6, flops_total / t / 1e9);
  }
  std::printf("\n");
  return 0;
}
