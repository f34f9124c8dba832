// f32_inverted_residual_benchmark: MobileNetV2's inverted residual blocks
// at 224x224 (expansion 6, ReLU6, random weights and inputs) run in one
// pass (runtime/f32_inverted_residual.h) against the node-by-node run the
// backend does without the fusion: XNNPACK's 1x1 convolution operators, the
// host depthwise kernel (f32_dwconv.h) and XNNPACK's add, on one thread.
//
//   f32_inverted_residual_benchmark [--quick] [--cold]
//
// Per block: microseconds of this thread's CPU time per call (the best of
// several runs), GFLOP/s, and whether the backend fuses that block
// (F32InvertedResidual::pays); then the totals over the network (blocks
// counted as often as MobileNetV2 has them). `--quick`: one small round
// (the smoke test checks that it reports). `--cold`: each call starts with
// caches holding none of its data, as when a network's other layers pass
// between calls (tools/benchmark_util.h). A benchmark, not a test.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/f32_inverted_residual.h>
#include <executorch/backends/xnnpack/tools/benchmark_util.h>

namespace xnn = executorch::backends::xnnpack;
using xnn::bench::best_of;

namespace {

struct Block {
  size_t size, in_channels, out_channels, stride, count;
};

// MobileNetV2's blocks of expansion 6: input size, input and output
// channels, the depthwise stride, and how many the network has.
constexpr Block kBlocks[] = {{112, 16, 24, 2, 1},
                             {56, 24, 24, 1, 1},
                             {56, 24, 32, 2, 1},
                             {28, 32, 32, 1, 2},
                             {28, 32, 64, 2, 1},
                             {14, 64, 64, 1, 3},
                             {14, 64, 96, 1, 1},
                             {14, 96, 96, 1, 2},
                             {14, 96, 160, 2, 1},
                             {7, 160, 160, 1, 2},
                             {7, 160, 320, 1, 1}};

xnn_operator_t pointwise_operator(const xnn::F32PointwiseConv& conv) {
  xnn_operator_t op = nullptr;
  const xnn_status status = xnn_create_convolution2d_nhwc_f32(0,
                                                              0,
                                                              0,
                                                              0,
                                                              1,
                                                              1,
                                                              1,
                                                              1,
                                                              1,
                                                              1,
                                                              1,
                                                              conv.in_channels,
                                                              conv.out_channels,
                                                              conv.in_channels,
                                                              conv.out_channels,
                                                              conv.filter,
                                                              conv.bias,
                                                              conv.output_min,
                                                              conv.output_max,
                                                              0,
                                                              &op);
  return status == xnn_status_success ? op : nullptr;
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
  if (isas.empty()) {
    std::fprintf(stderr, "no host depthwise loop on this CPU\n");
    return 1;
  }
  const xnn::Isa host_isa = isas.back();
  std::printf("us of thread CPU time per call (GFLOP/s)\n%-26s %5s %15s",
              "block (x count)",
              "fused",
              "node by node");
  for (xnn::Isa isa : isas) {
    std::printf(" %15s", executorch::kernels::optimized::isa_name(isa));
  }
  std::printf("\n");
  std::vector<double> totals(isas.size() + 1, 0.0);
  double flops_total = 0;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (const Block& b : kBlocks) {
    const size_t size = quick ? std::min<size_t>(b.size, 14) : b.size;
    const size_t out = (size - 1) / b.stride + 1;
    const size_t mid_c = 6 * b.in_channels;
    const bool residual = b.stride == 1 && b.in_channels == b.out_channels;
    std::vector<float> in(size * size * b.in_channels),
        expand_filter(mid_c * b.in_channels), expand_bias(mid_c),
        dw_filter(9 * mid_c), dw_bias(mid_c),
        project_filter(b.out_channels * mid_c), project_bias(b.out_channels),
        expanded(size * size * mid_c), filtered(out * out * mid_c),
        projected(out * out * b.out_channels), y(out * out * b.out_channels);
    for (auto* v : {&in,
                    &expand_filter,
                    &expand_bias,
                    &dw_filter,
                    &dw_bias,
                    &project_filter,
                    &project_bias}) {
      for (float& e : *v) {
        e = 0.2f * normal(rng);
      }
    }
    xnn::F32PointwiseConv expand{expand_filter.data(),
                                 expand_bias.data(),
                                 b.in_channels,
                                 mid_c,
                                 0.0f,
                                 6.0f};
    xnn::F32PointwiseConv project{
        project_filter.data(), project_bias.data(), mid_c, b.out_channels};
    xnn::F32DwConvShape dw_shape;
    dw_shape.stride_h = dw_shape.stride_w = b.stride;
    dw_shape.pad_top = dw_shape.pad_left = 1;
    dw_shape.channels = mid_c;
    dw_shape.output_min = 0.0f;
    dw_shape.output_max = 6.0f;
    auto depthwise = std::make_shared<xnn::F32DwConv>();
    if (!depthwise->init(dw_shape, dw_filter.data(), dw_bias.data())) {
      std::fprintf(stderr, "F32DwConv::init failed\n");
      return 1;
    }
    const double flops = 2.0 * (double(size) * size * b.in_channels * mid_c +
                                double(out) * out * mid_c * 9 +
                                double(out) * out * mid_c * b.out_channels);
    const size_t calls = std::max<size_t>(1, quick ? 1 : size_t(4e8 / flops));
    std::vector<double> seconds;

    xnn_operator_t expand_op = pointwise_operator(expand);
    xnn_operator_t project_op = pointwise_operator(project);
    xnn_operator_t add_op = nullptr;
    const size_t dims[4] = {1, out, out, b.out_channels};
    if (expand_op == nullptr || project_op == nullptr ||
        xnn_create_add_nd_f32(-INFINITY, INFINITY, 0, &add_op) !=
            xnn_status_success ||
        xnn_setup_convolution2d_nhwc_f32(
            expand_op, 1, size, size, in.data(), expanded.data(), nullptr) !=
            xnn_status_success ||
        xnn_setup_convolution2d_nhwc_f32(project_op,
                                         1,
                                         out,
                                         out,
                                         filtered.data(),
                                         residual ? projected.data() : y.data(),
                                         nullptr) != xnn_status_success ||
        xnn_setup_add_nd_f32(add_op,
                             4,
                             dims,
                             4,
                             dims,
                             projected.data(),
                             in.data(),
                             y.data(),
                             nullptr) != xnn_status_success) {
      std::fprintf(stderr, "XNNPACK's operators failed\n");
      return 1;
    }
    seconds.push_back(best_of(rounds, calls, cold, [&] {
      xnn_run_operator(expand_op, nullptr);
      depthwise->run(expanded.data(),
                     1,
                     size,
                     size,
                     filtered.data(),
                     out,
                     out,
                     nullptr,
                     host_isa);
      xnn_run_operator(project_op, nullptr);
      if (residual) {
        xnn_run_operator(add_op, nullptr);
      }
    }));
    for (xnn_operator_t op : {expand_op, project_op, add_op}) {
      xnn_delete_operator(op);
    }

    for (xnn::Isa isa : isas) {
      xnn::F32InvertedResidual block;
      if (!block.init(expand, depthwise, project, residual, isa)) {
        std::fprintf(stderr, "F32InvertedResidual::init failed\n");
        return 1;
      }
      seconds.push_back(best_of(rounds, calls, cold, [&] {
        block.run(in.data(), 1, size, size, y.data(), out, out, nullptr);
      }));
    }

    char name[48];
    std::snprintf(name,
                  sizeof(name),
                  "%zux%zu %zu>%zu>%zu s%zu x%zu",
                  size,
                  size,
                  b.in_channels,
                  mid_c,
                  b.out_channels,
                  b.stride,
                  b.count);
    std::printf(
        "%-26s %5s",
        name,
        xnn::F32InvertedResidual::pays(size, size, mid_c) ? "yes" : "no");
    for (size_t i = 0; i < seconds.size(); ++i) {
      std::printf(
          "   %6.1f (%4.0f)", seconds[i] * 1e6, flops / seconds[i] / 1e9);
      totals[i] += seconds[i] * double(b.count);
    }
    std::printf("\n");
    flops_total += flops * double(b.count);
  }
  std::printf("%-26s %5s", "MobileNetV2 total", "");
  for (double t : totals) {
    std::printf("   %6.1f (%4.0f)", t * 1e6, flops_total / t / 1e9);
  }
  std::printf("\n");
  return 0;
}
