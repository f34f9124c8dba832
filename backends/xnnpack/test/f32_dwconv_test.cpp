// The host fp32 depthwise 3x3 convolution (runtime/f32_dwconv.h) against a
// direct scalar convolution in double precision: every row loop this CPU
// runs (portable, AVX2, AVX-512), on one thread and several, with strides 1
// and 2, padding 0, 1 and 2, tiny and odd sizes, channel counts that are not
// multiples of any vector width, two images, the clamp and no bias; and an
// fp32 depthwise node run by the backend on the host kernel and on XNNPACK.
//
// Tolerance: an output is the bias plus 9 products, added in another order
// than the reference's (and fused or not), so it may differ from the exact
// sum by a few roundings of fp32 partial sums, each at most 2^-24 of the sum
// of the terms' magnitudes: |got - exact| <= 16 * 2^-24 * (|bias| +
// sum |w x|) holds with room. The clamp does not widen the error.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/f32_dwconv.h>
#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/test/blob_builder.h>
#include <executorch/backends/xnnpack/test/delegate_runner.h>
#include <executorch/backends/xnnpack/test/test_util.h>

namespace {

using executorch::backends::xnnpack::F32DwConv;
using executorch::backends::xnnpack::F32DwConvShape;
using executorch::backends::xnnpack::Isa;
using executorch::backends::xnnpack::kMinParallelNs;
using executorch::backends::xnnpack::pool_for;
using executorch::backends::xnnpack::testing::expect_within_bounds;
using executorch::backends::xnnpack::testing::guarded_output;
using executorch::backends::xnnpack::testing::run_with_host_kernels;

struct Case {
  const char* name;
  F32DwConvShape shape;
  size_t batch, in_h, in_w;
  // Padding past the bottom and right edges (XNNPACK's padding_bottom and
  // padding_right; the kernel reads them from the output size).
  size_t pad_bottom, pad_right;
  bool bias;
};

size_t out_size(size_t in, size_t pad_before, size_t pad_after, size_t stride) {
  return (in + pad_before + pad_after - 3) / stride + 1;
}

// The exact output (in double) and the bound on its fp32 error (above).
struct Reference {
  std::vector<double> out;
  std::vector<double> bound;
};

Reference reference(const Case& c,
                    const std::vector<float>& in,
                    const std::vector<float>& filter,
                    const std::vector<float>& bias,
                    size_t oh,
                    size_t ow) {
  const F32DwConvShape& s = c.shape;
  const size_t channels = s.channels;
  Reference r;
  for (size_t b = 0; b < c.batch; ++b)
    for (size_t y = 0; y < oh; ++y)
      for (size_t x = 0; x < ow; ++x)
        for (size_t ch = 0; ch < channels; ++ch) {
          double acc = c.bias ? bias[ch] : 0.0;
          double magnitude = std::fabs(acc);
          for (size_t ky = 0; ky < 3; ++ky)
            for (size_t kx = 0; kx < 3; ++kx) {
              const int64_t iy =
                  int64_t(y * s.stride_h + ky) - int64_t(s.pad_top);
              const int64_t ix =
                  int64_t(x * s.stride_w + kx) - int64_t(s.pad_left);
              if (iy < 0 || ix < 0 || iy >= int64_t(c.in_h) ||
                  ix >= int64_t(c.in_w)) {
                continue;
              }
              const double p =
                  double(
                      in[((b * c.in_h + iy) * c.in_w + ix) * channels + ch]) *
                  filter[(ky * 3 + kx) * channels + ch];
              acc += p;
              magnitude += std::fabs(p);
            }
          acc = std::min(std::max(acc, double(s.output_min)),
                         double(s.output_max));
          r.out.push_back(acc);
          r.bound.push_back(16 * std::ldexp(magnitude, -24));
        }
  return r;
}

const char* name_of(Isa isa) {
  return isa == Isa::kAvx512 ? "avx512"
         : isa == Isa::kAvx2 ? "avx2"
                             : "portable";
}

// Runs `conv` with each row loop this CPU has, on one thread, on three,
// and on two where the backend would split (the estimate is worth two
// threads) else one, and expects `want` each time.
void expect_near_reference(const F32DwConv& conv,
                           const Case& c,
                           const std::vector<float>& in,
                           size_t oh,
                           size_t ow,
                           const Reference& want) {
  pthreadpool_t pool = pthreadpool_create(3);
  pthreadpool_t two = pthreadpool_create(2);
  pthreadpool_t chosen =
      pool_for(size_t(conv.cost_ns(c.batch, c.in_h, c.in_w, oh, ow)),
               kMinParallelNs,
               two);
  ASSERT_FALSE(F32DwConv::available_isas().empty());
  for (Isa isa : F32DwConv::available_isas()) {
    for (pthreadpool_t p : {pthreadpool_t(nullptr), pool, chosen}) {
      std::vector<float> got = guarded_output(want.out.size());
      conv.run(in.data(), c.batch, c.in_h, c.in_w, got.data(), oh, ow, p, isa);
      expect_within_bounds(
          got,
          want.out,
          want.bound,
          std::string(name_of(isa)) + ", " +
              std::to_string(p ? pthreadpool_get_threads_count(p) : 1) +
              " threads");
    }
  }
  pthreadpool_destroy(two);
  pthreadpool_destroy(pool);
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class F32DwConvTest : public ::testing::TestWithParam<Case> {};

TEST_P(F32DwConvTest, KernelsMatchTheScalarReference) {
  const Case& c = GetParam();
  const F32DwConvShape& s = c.shape;
  const size_t channels = s.channels;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> in(c.batch * c.in_h * c.in_w * channels);
  std::vector<float> filter(9 * channels);
  std::vector<float> bias(channels);
  for (auto& v : in)
    v = normal(rng);
  for (auto& v : filter)
    v = normal(rng);
  for (auto& v : bias)
    v = normal(rng);
  const size_t oh = out_size(c.in_h, s.pad_top, c.pad_bottom, s.stride_h);
  const size_t ow = out_size(c.in_w, s.pad_left, c.pad_right, s.stride_w);
  const Reference want = reference(c, in, filter, bias, oh, ow);

  F32DwConv conv;
  ASSERT_TRUE(conv.init(s, filter.data(), c.bias ? bias.data() : nullptr));
  expect_near_reference(conv, c, in, oh, ow, want);
}

F32DwConvShape shape(size_t stride,
                     size_t pad,
                     size_t channels,
                     float output_min = -INFINITY,
                     float output_max = INFINITY) {
  F32DwConvShape s;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_left = pad;
  s.channels = channels;
  s.output_min = output_min;
  s.output_max = output_max;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    F32DwConvTest,
    ::testing::Values(
        // MobileNet's: padding 1 on every edge, ReLU6; 17 channels (a
        // partial block of every vector width), odd sizes, two images.
        Case{"stride1_pad1_c17_relu6",
             shape(1, 1, 17, 0.0f, 6.0f),
             2,
             7,
             5,
             1,
             1,
             true},
        // Stride 2 with odd input sizes; 40 channels (2.5 AVX-512 blocks).
        Case{"stride2_pad1_c40", shape(2, 1, 40), 1, 9, 11, 1, 1, true},
        // Stride 2, even sizes, padding only after (TF "same"), no bias.
        Case{
            "stride2_pad0_c16_no_bias", shape(2, 0, 16), 1, 8, 10, 1, 1, false},
        // No padding; 1 and 3 channels (a vector's first lanes only).
        Case{"stride1_pad0_c1", shape(1, 0, 1), 1, 5, 6, 0, 0, true},
        Case{"stride1_pad0_c3", shape(1, 0, 3), 2, 4, 3, 0, 0, true},
        // Tiny inputs: 1x1 and 2x3, every window mostly padding.
        Case{"stride1_pad1_1x1_c17", shape(1, 1, 17), 1, 1, 1, 1, 1, true},
        Case{"stride2_pad1_2x3_c3", shape(2, 1, 3), 2, 2, 3, 1, 1, true},
        Case{"stride1_pad1_2x3_c40_clamp",
             shape(1, 1, 40, -0.5f, 0.5f),
             1,
             2,
             3,
             1,
             1,
             true},
        // Padding 2: whole strips of columns read only padding.
        Case{"stride1_pad2_c24", shape(1, 2, 24), 1, 6, 7, 2, 2, true},
        // Rows of 23 and 29 columns: strips of 8, 4, 2 and 1 (of 4, 2, 1
        // on 16-register ISAs), interior and at both edges.
        Case{"stride1_pad1_w23_c40", shape(1, 1, 40), 1, 5, 23, 1, 1, true},
        Case{"stride2_pad1_w29_c33", shape(2, 1, 33), 1, 5, 29, 1, 1, true},
        // Vertical stride 2, horizontal 1.
        Case{"stride2x1_pad1_c8",
             [] {
               F32DwConvShape s = shape(1, 1, 8);
               s.stride_h = 2;
               return s;
             }(),
             1,
             9,
             9,
             1,
             1,
             true},
        // MobileNetV2's at 112x112 over 96 channels, stride 2, ReLU6: worth
        // two threads (most cases above run on one where the backend
        // chooses).
        Case{"mobilenet_v2_stride2_c96",
             shape(2, 1, 96, 0.0f, 6.0f),
             1,
             112,
             112,
             1,
             1,
             true}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.name);
    });

// The backend splits a depthwise convolution across two threads only when
// each gets at least 5 us of estimated work: all of MobileNetV2's do, 32
// channels at 7x7 do not.
TEST(F32DwConvCostTest, SplitsOnlyWorkWorthTwoThreads) {
  std::vector<float> filter(9 * 960, 1.0f);
  auto splits = [&](size_t stride, size_t channels, size_t in) {
    F32DwConv conv;
    EXPECT_TRUE(conv.init(shape(stride, 1, channels), filter.data(), nullptr));
    const size_t out = in / stride;
    return conv.cost_ns(1, in, in, out, out) >= kMinParallelNs;
  };
  EXPECT_TRUE(splits(1, 32, 112));
  EXPECT_TRUE(splits(2, 96, 112));
  EXPECT_TRUE(splits(1, 144, 56));
  EXPECT_TRUE(splits(2, 144, 56));
  EXPECT_TRUE(splits(1, 192, 28));
  EXPECT_TRUE(splits(2, 576, 14));
  EXPECT_FALSE(splits(1, 32, 7));
  EXPECT_FALSE(splits(2, 64, 7));
}

// A batch, output rows or columns of 0 write nothing.
TEST(F32DwConvEmptyTest, EmptyTensorsWriteNothing) {
  const std::vector<float> filter(9 * 8, 1.0f);
  F32DwConv conv;
  ASSERT_TRUE(conv.init(shape(1, 1, 8), filter.data(), nullptr));
  const std::vector<float> in(4 * 4 * 8, 1.0f);
  for (Isa isa : F32DwConv::available_isas()) {
    float out[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    conv.run(in.data(), 0, 4, 4, out, 4, 4, nullptr, isa);
    conv.run(in.data(), 1, 4, 4, out, 0, 4, nullptr, isa);
    conv.run(in.data(), 1, 4, 4, out, 4, 0, nullptr, isa);
    EXPECT_EQ(std::count(out, out + 8, 7.0f), 8);
  }
}

TEST(F32DwConvInitTest, RefusesShapesItDoesNotTake) {
  const std::vector<float> filter(9 * 4, 1.0f);
  F32DwConv conv;
  EXPECT_FALSE(conv.init(shape(3, 1, 4), filter.data(), nullptr));
  EXPECT_FALSE(conv.init(shape(1, 1, 0), filter.data(), nullptr));
  F32DwConvShape no_rows = shape(1, 1, 4);
  no_rows.stride_h = 0;
  EXPECT_FALSE(conv.init(no_rows, filter.data(), nullptr));
  EXPECT_TRUE(conv.init(shape(2, 1, 4), filter.data(), nullptr));
}

// An fp32 depthwise node as upstream's partitioner writes a MobileNet's
// (filter [1, 3, 3, C], bias, ReLU6 fused as the output clamp), run by the
// backend on the host kernel and, with EXECUTORCH_XNNPACK_HOST_KERNELS=0,
// on XNNPACK: both within the bound above of the reference.
TEST(F32DwConvNodeTest, HostKernelAndXnnpackMatchTheReference) {
  using executorch::backends::xnnpack::testing::BlobBuilder;
  using executorch::backends::xnnpack::testing::conv_params;
  using executorch::backends::xnnpack::testing::NodeKind;

  const uint32_t channels = 20, in_h = 9, in_w = 8, out_h = 5, out_w = 4;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(in_h * in_w * channels), filter(9 * channels),
      bias(channels);
  for (auto* v : {&x, &filter, &bias})
    for (auto& e : *v)
      e = normal(rng);

  BlobBuilder b;
  const uint32_t input = b.input({1, in_h, in_w, channels}, 0);
  const uint32_t w = b.constant({1, 3, 3, channels}, filter);
  const uint32_t bias_id = b.constant({channels}, bias);
  const uint32_t output = b.output({1, out_h, out_w, channels}, 1);
  b.node(NodeKind::XNNDepthwiseConv2d,
         {input, w, bias_id},
         output,
         conv_params(3, 2, 1, 1, channels, 1, 1),
         std::make_pair(0.0f, 6.0f));
  const std::vector<uint8_t> blob = b.build();

  const Case c{
      "node", shape(2, 1, channels, 0.0f, 6.0f), 1, in_h, in_w, 1, 1, true};
  const Reference want = reference(c, x, filter, bias, out_h, out_w);
  for (const char* host_kernels : {"1", "0"}) {
    expect_within_bounds(
        run_with_host_kernels(blob,
                              host_kernels,
                              {1, in_h, in_w, channels},
                              x,
                              {1, out_h, out_w, channels}),
        want.out,
        want.bound,
        std::string("EXECUTORCH_XNNPACK_HOST_KERNELS=") + host_kernels,
        /*guarded=*/false);
  }
}

} // namespace
