// Float32 3x3 convolutions that the backend runs on the optimized kernels'
// Winograd F(4x4, 3x3) (host_kernels.h): the host kernel and, with
// EXECUTORCH_XNNPACK_HOST_KERNELS=0, XNNPACK both match a direct
// convolution in double, and only the former takes Winograd (its counter,
// kernels/optimized/cpu/winograd.h). Shapes: odd sizes that end inside a
// tile, batch 2, channels that are not multiples of the vector width, a
// fused clamp, with and without bias, 1 and 2 threads.
//
// Tolerance: |got - ref| <= 1e-5 * S, S the largest sum of |w * x| over a
// window (as kernels/optimized/test/winograd_test.cpp says why).

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include <executorch/backends/xnnpack/runtime/threadpool.h>
#include <executorch/backends/xnnpack/test/test_util.h>
#include <executorch/kernels/optimized/cpu/winograd.h>

namespace {

using executorch::backends::xnnpack::set_default_num_threads;
using executorch::backends::xnnpack::testing::BlobBuilder;
using executorch::backends::xnnpack::testing::conv_params;
using executorch::backends::xnnpack::testing::DelegateRunner;
using executorch::backends::xnnpack::testing::input_tensor;
using executorch::backends::xnnpack::testing::NodeKind;
using executorch::backends::xnnpack::testing::output_tensor;
using executorch::backends::xnnpack::testing::random_values;
using executorch::backends::xnnpack::testing::TensorPtr;
using executorch::backends::xnnpack::testing::values_of;
using executorch::kernels::optimized::winograd_convolutions_run;

struct ConvCase {
  uint32_t batch, in_c, out_c, in_h, in_w, padding;
  bool bias;
  float min, max;
};

void check_case(const ConvCase& c) {
  const uint32_t out_h = c.in_h + 2 * c.padding - 2;
  const uint32_t out_w = c.in_w + 2 * c.padding - 2;
  const auto x =
      random_values(c.batch * c.in_h * c.in_w * c.in_c, -1.0f, 1.0f, 1);
  const auto filter =
      random_values(c.out_c * 9 * c.in_c, -1.0f, 1.0f, 2); // OHWI
  const auto bias = random_values(c.out_c, -1.0f, 1.0f, 3);
  BlobBuilder b;
  const uint32_t input = b.input({c.batch, c.in_h, c.in_w, c.in_c}, 0);
  const uint32_t w = b.constant({c.out_c, 3, 3, c.in_c}, filter);
  std::vector<uint32_t> inputs = {input, w};
  if (c.bias) {
    inputs.push_back(b.constant({c.out_c}, bias));
  }
  const uint32_t output = b.output({c.batch, out_h, out_w, c.out_c}, 1);
  b.node(NodeKind::XNNConv2d,
         inputs,
         output,
         conv_params(3, 1, c.padding, 1, 1, c.in_c, c.out_c),
         std::make_pair(c.min, c.max));
  const std::vector<uint8_t> blob = b.build();

  std::vector<double> want(c.batch * out_h * out_w * c.out_c);
  double scale = 1e-6;
  for (uint32_t n = 0; n < c.batch; ++n) {
    for (uint32_t y = 0; y < out_h; ++y) {
      for (uint32_t xo = 0; xo < out_w; ++xo) {
        for (uint32_t k = 0; k < c.out_c; ++k) {
          double sum = c.bias ? bias[k] : 0.0;
          double magnitude = std::fabs(sum);
          for (uint32_t ky = 0; ky < 3; ++ky) {
            for (uint32_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = int64_t(y) + ky - c.padding;
              const int64_t ix = int64_t(xo) + kx - c.padding;
              if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                continue;
              }
              for (uint32_t ci = 0; ci < c.in_c; ++ci) {
                const double term =
                    double(filter[((k * 3 + ky) * 3 + kx) * c.in_c + ci]) *
                    x[((n * c.in_h + iy) * c.in_w + ix) * c.in_c + ci];
                sum += term;
                magnitude += std::fabs(term);
              }
            }
          }
          want[((n * out_h + y) * out_w + xo) * c.out_c + k] =
              std::min<double>(std::max<double>(sum, c.min), c.max);
          scale = std::max(scale, magnitude);
        }
      }
    }
  }

  for (const char* host_kernels : {"1", "0"}) {
    for (size_t threads : {1, 2}) {
      setenv("EXECUTORCH_XNNPACK_HOST_KERNELS", host_kernels, 1);
      set_default_num_threads(threads);
      DelegateRunner runner;
      ASSERT_EQ(runner.init(blob), executorch::runtime::Error::Ok);
      TensorPtr in = input_tensor(
          {int32_t(c.batch), int32_t(c.in_h), int32_t(c.in_w), int32_t(c.in_c)},
          x);
      TensorPtr out = output_tensor(
          {int32_t(c.batch), int32_t(out_h), int32_t(out_w), int32_t(c.out_c)});
      const int64_t before = winograd_convolutions_run().load();
      ASSERT_EQ(runner.run({in}, {out}), executorch::runtime::Error::Ok);
      const bool on_host = host_kernels[0] == '1';
      EXPECT_EQ(winograd_convolutions_run().load() - before, on_host ? 1 : 0)
          << "EXECUTORCH_XNNPACK_HOST_KERNELS=" << host_kernels;
      const std::vector<float> got = values_of(out);
      size_t bad = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        if (!(std::fabs(got[i] - want[i]) <= 1e-5 * scale) && ++bad <= 3) {
          ADD_FAILURE() << "[" << i << "] got " << got[i] << " expected "
                        << want[i]
                        << " (EXECUTORCH_XNNPACK_HOST_KERNELS=" << host_kernels
                        << ", " << threads << " threads)";
        }
      }
      EXPECT_EQ(bad, 0u);
    }
  }
  unsetenv("EXECUTORCH_XNNPACK_HOST_KERNELS");
  set_default_num_threads(0);
}

TEST(WinogradConvNodeTest, HostKernelAndXnnpackMatchADirectConvolution) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  check_case({2, 19, 37, 13, 11, 1, true, 0.0f, 0.75f});
  check_case({1, 64, 64, 16, 16, 1, false, -kInf, kInf});
  check_case({1, 24, 20, 12, 9, 0, true, 0.0f, kInf});
}

} // namespace

#endif // EXECUTORCH_XNNPACK_OPTIMIZED_HOST
