// The host int8 convolution (runtime/qs8_conv.h) against a direct scalar
// convolution with the same requantization: the portable and the VNNI
// kernels must equal it exactly, on one thread and several, with padding,
// strides, dilation, reductions and channel counts that are not multiples of
// the kernel's tiles, ties at .5 and saturation.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/qs8_conv.h>

namespace {

using executorch::backends::xnnpack::kMinParallelNs;
using executorch::backends::xnnpack::pool_for;
using executorch::backends::xnnpack::Qs8Conv;
using executorch::backends::xnnpack::Qs8ConvQuant;
using executorch::backends::xnnpack::Qs8ConvShape;
namespace qs8 = executorch::backends::xnnpack::qs8;

struct Case {
  const char* name;
  Qs8ConvShape shape;
  size_t batch, in_h, in_w;
};

size_t out_size(
    size_t in, size_t pad, size_t kernel, size_t stride, size_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// The convolution one output at a time: sum((x - zero point) * w) over the
// window (padding contributes nothing), plus the bias, requantized.
std::vector<int8_t> reference(const Case& c,
                              const Qs8ConvQuant& q,
                              const std::vector<int8_t>& in,
                              const std::vector<int8_t>& filter,
                              const std::vector<int32_t>& bias,
                              size_t oh,
                              size_t ow) {
  const Qs8ConvShape& s = c.shape;
  std::vector<int8_t> out(c.batch * oh * ow * s.out_channels);
  size_t i = 0;
  for (size_t b = 0; b < c.batch; ++b)
    for (size_t y = 0; y < oh; ++y)
      for (size_t x = 0; x < ow; ++x)
        for (size_t n = 0; n < s.out_channels; ++n) {
          int64_t acc = bias[n];
          for (size_t ky = 0; ky < s.kernel_h; ++ky)
            for (size_t kx = 0; kx < s.kernel_w; ++kx) {
              const int64_t iy = int64_t(y * s.stride_h + ky * s.dilation_h) -
                                 int64_t(s.pad_top);
              const int64_t ix = int64_t(x * s.stride_w + kx * s.dilation_w) -
                                 int64_t(s.pad_left);
              if (iy < 0 || ix < 0 || iy >= int64_t(c.in_h) ||
                  ix >= int64_t(c.in_w)) {
                continue;
              }
              for (size_t ch = 0; ch < s.in_channels; ++ch) {
                const int64_t v =
                    in[((b * c.in_h + iy) * c.in_w + ix) * s.in_channels + ch];
                const int64_t w =
                    filter[((n * s.kernel_h + ky) * s.kernel_w + kx) *
                               s.in_channels +
                           ch];
                acc += (v - q.input_zero_point) * w;
              }
            }
          const float scale =
              q.input_scale * q.filter_scales[n] / q.output_scale;
          float v = static_cast<float>(acc) * scale;
          v = std::fmin(std::fmax(v, float(q.output_min - q.output_zero_point)),
                        float(q.output_max - q.output_zero_point));
          out[i++] = static_cast<int8_t>(int32_t(std::nearbyint(v)) +
                                         q.output_zero_point);
        }
  return out;
}

class Qs8ConvTest : public ::testing::TestWithParam<Case> {};

TEST_P(Qs8ConvTest, KernelsEqualTheScalarReference) {
  const Case& c = GetParam();
  const Qs8ConvShape& s = c.shape;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> in(c.batch * c.in_h * c.in_w * s.in_channels);
  std::vector<int8_t> filter(s.out_channels * s.kernel_h * s.kernel_w *
                             s.in_channels);
  std::vector<int32_t> bias(s.out_channels);
  std::vector<float> scales(s.out_channels);
  for (auto& v : in)
    v = static_cast<int8_t>(byte(rng));
  for (auto& v : filter)
    v = static_cast<int8_t>(byte(rng));
  for (auto& v : bias)
    v = std::uniform_int_distribution<int32_t>(-20000, 20000)(rng);
  for (auto& v : scales)
    v = std::uniform_real_distribution<float>(0.001f, 0.02f)(rng);
  Qs8ConvQuant q;
  q.input_scale = 0.05f;
  q.input_zero_point = 13;
  q.filter_scales = scales.data();
  q.output_scale = 0.15f;
  q.output_zero_point = -7;
  q.output_min = -100;
  q.output_max = 120;
  const size_t oh =
      out_size(c.in_h, s.pad_top, s.kernel_h, s.stride_h, s.dilation_h);
  const size_t ow =
      out_size(c.in_w, s.pad_left, s.kernel_w, s.stride_w, s.dilation_w);
  const std::vector<int8_t> want = reference(c, q, in, filter, bias, oh, ow);
  // Both clamp ends are reached, so saturation is checked too.
  EXPECT_NE(std::find(want.begin(), want.end(), int8_t(-100)), want.end());
  EXPECT_NE(std::find(want.begin(), want.end(), int8_t(120)), want.end());

  Qs8Conv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), bias.data()));
  // One thread, three, and two where the backend would split (the
  // estimate is worth two threads), else one.
  pthreadpool_t pool = pthreadpool_create(3);
  pthreadpool_t two = pthreadpool_create(2);
  pthreadpool_t chosen =
      pool_for(size_t(conv.cost_ns(c.batch, oh, ow)), kMinParallelNs, two);
  for (bool vnni : {false, true}) {
    if (vnni && !qs8::vnni_available()) {
      continue;
    }
    for (pthreadpool_t p : {pthreadpool_t(nullptr), pool, chosen}) {
      std::vector<int8_t> got(want.size(), 0);
      conv.run(in.data(), c.batch, c.in_h, c.in_w, got.data(), oh, ow, p, vnni);
      EXPECT_EQ(got, want) << (vnni ? "vnni" : "portable") << ", "
                           << (p ? pthreadpool_get_threads_count(p) : 1)
                           << " threads";
    }
  }
  pthreadpool_destroy(two);
  pthreadpool_destroy(pool);
}

Qs8ConvShape shape(size_t k,
                   size_t stride,
                   size_t dilation,
                   size_t pad,
                   size_t ic,
                   size_t oc) {
  Qs8ConvShape s;
  s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = pad;
  s.in_channels = ic;
  s.out_channels = oc;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    Qs8ConvTest,
    ::testing::Values(
        // 27-long reduction (not a multiple of 4), 20 channels (a partial
        // second block), 70 pixels (a partial row tile).
        Case{"k3_pad1_ic3_oc20", shape(3, 1, 1, 1, 3, 20), 2, 7, 5},
        // 1x1: three blocks of 16 (a pair, then one); rows read in the
        // input (in channels a multiple of 4).
        Case{"k1_ic64_oc48", shape(1, 1, 1, 0, 64, 48), 1, 6, 6},
        // 1x1 at stride 2 (ResNet's downsampling), 2 images of 5x17: tiles
        // inside an output row read in the input (68 > 64 channels: the row
        // sums' masked tail), tiles across rows copied, a partial last one.
        Case{"k1_stride2_ic68_oc24", shape(1, 2, 1, 0, 68, 24), 2, 5, 17},
        // 1x1 with padding: the border rows are copied, the rest read in
        // place.
        Case{"k1_pad1_ic8_oc16", shape(1, 1, 1, 1, 8, 16), 1, 4, 3},
        // 1x1 over 16 channels into 40 (a pair of blocks, then half of
        // one), 25 pixels: the last tile is one row (an odd one of a pair
        // of rows requantized together, and one of four).
        Case{"k1_ic16_oc40", shape(1, 1, 1, 0, 16, 40), 1, 5, 5},
        // 1x1 over 6 channels (not a multiple of 4): copied rows.
        Case{"k1_ic6_oc17", shape(1, 1, 1, 0, 6, 17), 1, 3, 5},
        Case{"k3_stride2_dilation2_pad2_ic5_oc33",
             shape(3, 2, 2, 2, 5, 33),
             1,
             11,
             9},
        // Window rows of 72 bytes (3 pixels of 24 channels): copied and
        // padded in runs longer than one masked move.
        Case{"k3_pad1_ic24_oc16", shape(3, 1, 1, 1, 24, 16), 1, 5, 6},
        // A 7x7 output (7 tiles, fewer than 4 per thread of 3): the tiles'
        // 80 channels are split in two parts of up to 64, the last partial.
        Case{"k3_pad1_ic16_oc80_7x7", shape(3, 1, 1, 1, 16, 80), 1, 7, 7},
        // Pixels a multiple of 7 but not of 8 take tiles of 7 rows: a 1x1
        // at 14x14 (tiles read in the input, across output rows), and a
        // stride-2 1x1 of two images to 7x7 (tiles across images, copied).
        Case{"k1_ic32_oc40_14x14", shape(1, 1, 1, 0, 32, 40), 1, 14, 14},
        Case{
            "k1_stride2_ic24_oc20_2x7x7", shape(1, 2, 1, 0, 24, 20), 2, 14, 14},
        // ResNet's stem.
        Case{"k7_stride2_pad3_ic3_oc64", shape(7, 2, 1, 3, 3, 64), 1, 20, 20},
        // MobileNetV2's stem at 224x224: worth two threads (the cases
        // above run on one where the backend chooses).
        Case{"mobilenet_v2_stem", shape(3, 2, 1, 1, 3, 32), 1, 224, 224}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.name);
    });

// The backend splits a convolution across two threads only when each gets
// at least 5 us of estimated work: MobileNetV2's stem (245 us on one
// thread), its 1x1s at 112 and 56 and its 1x1s at 7x7 (22-108 us) do;
// 1x1s of 64 channels at 7x7 (~1 us) and a 16-channel one (0.1 us) do not.
TEST(Qs8ConvCostTest, SplitsOnlyWorkWorthTwoThreads) {
  std::vector<int8_t> filter(1280 * 320, 1);
  std::vector<float> scales(1280, 0.01f);
  Qs8ConvQuant q;
  q.input_scale = q.output_scale = 1.0f;
  q.filter_scales = scales.data();
  auto splits = [&](const Qs8ConvShape& s, size_t out) {
    Qs8Conv conv;
    EXPECT_TRUE(conv.init(s, q, filter.data(), nullptr));
    return conv.cost_ns(1, out, out) >= kMinParallelNs;
  };
  EXPECT_TRUE(splits(shape(3, 2, 1, 1, 3, 32), 112));
  EXPECT_TRUE(splits(shape(1, 1, 1, 0, 16, 96), 112));
  EXPECT_TRUE(splits(shape(1, 1, 1, 0, 320, 1280), 7));
  EXPECT_TRUE(splits(shape(1, 1, 1, 0, 96, 24), 56));
  EXPECT_TRUE(splits(shape(1, 1, 1, 0, 576, 160), 7));
  EXPECT_FALSE(splits(shape(1, 1, 1, 0, 64, 64), 7));
  EXPECT_FALSE(splits(shape(1, 1, 1, 0, 16, 16), 7));
}

// acc * scale exactly halfway between two integers rounds to the even one,
// as torch's quantize does.
TEST(Qs8ConvRoundingTest, TiesRoundToEven) {
  const Qs8ConvShape s = shape(1, 1, 1, 0, 1, 6);
  const std::vector<int8_t> filter(6, 1);
  // x - zero point = 0, so each output is bias * 0.5.
  const std::vector<int32_t> bias = {1, 3, 5, -1, -3, -5};
  const std::vector<float> scales(6, 0.5f);
  Qs8ConvQuant q;
  q.input_zero_point = 4;
  q.filter_scales = scales.data();
  const int8_t in[1] = {4};
  Qs8Conv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), bias.data()));
  for (bool vnni : {false, true}) {
    if (vnni && !qs8::vnni_available()) {
      continue;
    }
    int8_t out[6];
    conv.run(in, 1, 1, 1, out, 1, 1, nullptr, vnni);
    EXPECT_EQ(std::vector<int8_t>(out, out + 6),
              (std::vector<int8_t>{0, 2, 2, 0, -2, -2}))
        << (vnni ? "vnni" : "portable");
  }
}

// The extreme bytes over the longest reduction: every product
// (x - zero point) * w at its largest (-255 * -128), so the largest sums
// (and adjusted biases) the kernel can meet, requantized
// inside the output range so that any error in them shows.
TEST(Qs8ConvRangeTest, LongestReductionOfExtremeBytes) {
  const size_t k = Qs8Conv::kMaxReduction;
  const Qs8ConvShape s = shape(1, 1, 1, 0, k, 3);
  std::vector<int8_t> filter(3 * k);
  for (size_t i = 0; i < k; ++i) {
    filter[i] = -128;
    filter[k + i] = 127;
    filter[2 * k + i] = i % 2 ? 127 : -128;
  }
  const std::vector<float> scales(3, 1.0f);
  Qs8ConvQuant q;
  q.input_zero_point = 127;
  q.filter_scales = scales.data();
  q.output_scale = 3e6f;
  Qs8Conv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), nullptr));
  // All -128, all 127, then alternating.
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<int8_t> in(k);
    for (size_t i = 0; i < k; ++i) {
      in[i] = pattern == 1 || (pattern == 2 && i % 2) ? 127 : -128;
    }
    std::vector<int8_t> want(3);
    for (size_t n = 0; n < 3; ++n) {
      int64_t acc = 0;
      for (size_t i = 0; i < k; ++i) {
        acc += (int64_t(in[i]) - 127) * filter[n * k + i];
      }
      want[n] = static_cast<int8_t>(std::nearbyint(float(acc) / 3e6f));
    }
    if (pattern == 0) {
      // 255 * 128 * 8192 / 3e6 and -255 * 127 * 8192 / 3e6.
      ASSERT_EQ(want, (std::vector<int8_t>{89, -88, 0}));
    }
    for (bool vnni : {false, true}) {
      if (vnni && !qs8::vnni_available()) {
        continue;
      }
      std::vector<int8_t> got(3);
      conv.run(in.data(), 1, 1, 1, got.data(), 1, 1, nullptr, vnni);
      EXPECT_EQ(got, want) << (vnni ? "vnni" : "portable") << ", pattern "
                           << pattern;
    }
  }
}

// Sums whose scaled values are far outside int32 (cvtps2dq's range) land
// on the clamp bounds, as in the scalar requantization.
TEST(Qs8ConvRangeTest, ScaledSumsBeyondInt32Saturate) {
  const Qs8ConvShape s = shape(1, 1, 1, 0, 4, 20);
  std::vector<int8_t> filter(20 * 4);
  std::vector<int32_t> bias(20);
  for (size_t n = 0; n < 20; ++n) {
    for (size_t k = 0; k < 4; ++k) {
      filter[n * 4 + k] = n % 2 ? 127 : -128;
    }
    bias[n] = n % 3 == 0 ? 0 : 1000;
  }
  const std::vector<float> scales(20, 1.0f);
  Qs8ConvQuant q;
  q.input_zero_point = -128;
  q.filter_scales = scales.data();
  q.output_scale = 1e-9f;
  q.output_zero_point = 5;
  q.output_min = -90;
  q.output_max = 110;
  const int8_t in[4] = {127, 127, 127, 127};
  std::vector<int8_t> want(20);
  for (size_t n = 0; n < 20; ++n) {
    // (255 * 4 * w + bias) * 1e9 is about +-1.3e14: the sign of w decides.
    want[n] = n % 2 ? 110 : -90;
  }
  Qs8Conv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), bias.data()));
  for (bool vnni : {false, true}) {
    if (vnni && !qs8::vnni_available()) {
      continue;
    }
    std::vector<int8_t> got(20);
    conv.run(in, 1, 1, 1, got.data(), 1, 1, nullptr, vnni);
    EXPECT_EQ(got, want) << (vnni ? "vnni" : "portable");
  }
}

TEST(Qs8ConvInitTest, RefusesAReductionLongerThanItsTiles) {
  const Qs8ConvShape s = shape(3, 1, 1, 1, Qs8Conv::kMaxReduction / 9 + 1, 4);
  const std::vector<int8_t> filter(4 * 9 * s.in_channels, 1);
  const std::vector<float> scales(4, 1.0f);
  Qs8ConvQuant q;
  q.filter_scales = scales.data();
  Qs8Conv conv;
  EXPECT_FALSE(conv.init(s, q, filter.data(), nullptr));
}

} // namespace
