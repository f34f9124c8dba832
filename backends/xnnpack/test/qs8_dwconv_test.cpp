// The host int8 depthwise convolution (runtime/qs8_dwconv.h) against a
// direct scalar depthwise convolution with the same requantization: the
// portable and the VNNI kernels must equal it exactly, on one thread and
// several, with padding on every edge, strides, dilation, odd sizes, channel
// counts that are not multiples of 16, tiles of rows, columns and channels,
// ties at .5, saturation at the int8 limits, the output clamp and empty
// tensors.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/qs8_dwconv.h>
#include <executorch/backends/xnnpack/test/blob_builder.h>
#include <executorch/backends/xnnpack/test/delegate_runner.h>

namespace {

using executorch::backends::xnnpack::kMinParallelNs;
using executorch::backends::xnnpack::pool_for;
using executorch::backends::xnnpack::Qs8ConvQuant;
using executorch::backends::xnnpack::Qs8ConvShape;
using executorch::backends::xnnpack::Qs8DwConv;
namespace qs8 = executorch::backends::xnnpack::qs8;

struct Case {
  const char* name;
  Qs8ConvShape shape;
  size_t batch, in_h, in_w;
  // Padding past the bottom and right edges (XNNPACK's padding_bottom and
  // padding_right; the kernel reads them from the output size).
  size_t pad_bottom, pad_right;
};

size_t out_size(size_t in,
                size_t pad_before,
                size_t pad_after,
                size_t kernel,
                size_t stride,
                size_t dilation) {
  return (in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride +
         1;
}

// One output at a time: sum((x - zero point) * w) over the window (padding
// contributes nothing), plus the bias, requantized.
std::vector<int8_t> reference(const Case& c,
                              const Qs8ConvQuant& q,
                              const std::vector<int8_t>& in,
                              const std::vector<int8_t>& filter,
                              const std::vector<int32_t>& bias,
                              size_t oh,
                              size_t ow) {
  const Qs8ConvShape& s = c.shape;
  const size_t channels = s.out_channels;
  std::vector<int8_t> out(c.batch * oh * ow * channels);
  size_t i = 0;
  for (size_t b = 0; b < c.batch; ++b)
    for (size_t y = 0; y < oh; ++y)
      for (size_t x = 0; x < ow; ++x)
        for (size_t ch = 0; ch < channels; ++ch) {
          int64_t acc = bias[ch];
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
              const int64_t v =
                  in[((b * c.in_h + iy) * c.in_w + ix) * channels + ch];
              const int64_t w = filter[(ky * s.kernel_w + kx) * channels + ch];
              acc += (v - q.input_zero_point) * w;
            }
          const float scale =
              q.input_scale * q.filter_scales[ch] / q.output_scale;
          float v = static_cast<float>(acc) * scale;
          v = std::fmin(std::fmax(v, float(q.output_min - q.output_zero_point)),
                        float(q.output_max - q.output_zero_point));
          out[i++] = static_cast<int8_t>(int32_t(std::nearbyint(v)) +
                                         q.output_zero_point);
        }
  return out;
}

// Runs `conv` with each kernel this CPU has, on one thread, on three, and
// on two where the backend would split (the estimate is worth two threads)
// else one, and expects `want` each time.
void expect_kernels_equal(const Qs8DwConv& conv,
                          const Case& c,
                          const std::vector<int8_t>& in,
                          size_t oh,
                          size_t ow,
                          const std::vector<int8_t>& want) {
  pthreadpool_t pool = pthreadpool_create(3);
  pthreadpool_t two = pthreadpool_create(2);
  pthreadpool_t chosen =
      pool_for(size_t(conv.cost_ns(c.batch, c.in_h, c.in_w, oh, ow)),
               kMinParallelNs,
               two);
  for (bool vnni : {false, true}) {
    if (vnni && !qs8::vnni_available()) {
      continue;
    }
    for (pthreadpool_t p : {pthreadpool_t(nullptr), pool, chosen}) {
      // Bytes past the output must stay untouched.
      std::vector<int8_t> got(want.size() + 64, 99);
      conv.run(in.data(), c.batch, c.in_h, c.in_w, got.data(), oh, ow, p, vnni);
      EXPECT_EQ(std::vector<int8_t>(got.begin(), got.begin() + want.size()),
                want)
          << (vnni ? "vnni" : "portable") << ", "
          << (p ? pthreadpool_get_threads_count(p) : 1) << " threads";
      EXPECT_EQ(std::count(got.begin() + want.size(), got.end(), 99), 64);
    }
  }
  pthreadpool_destroy(two);
  pthreadpool_destroy(pool);
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class Qs8DwConvTest : public ::testing::TestWithParam<Case> {};

TEST_P(Qs8DwConvTest, KernelsEqualTheScalarReference) {
  const Case& c = GetParam();
  const Qs8ConvShape& s = c.shape;
  const size_t channels = s.out_channels;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> in(c.batch * c.in_h * c.in_w * channels);
  std::vector<int8_t> filter(s.kernel_h * s.kernel_w * channels);
  std::vector<int32_t> bias(channels);
  std::vector<float> scales(channels);
  for (auto& v : in)
    v = static_cast<int8_t>(byte(rng));
  for (auto& v : filter)
    v = static_cast<int8_t>(byte(rng));
  for (auto& v : bias)
    v = std::uniform_int_distribution<int32_t>(-3000, 3000)(rng);
  for (auto& v : scales)
    v = std::uniform_real_distribution<float>(0.002f, 0.03f)(rng);
  Qs8ConvQuant q;
  q.input_scale = 0.05f;
  q.input_zero_point = -9;
  q.filter_scales = scales.data();
  q.output_scale = 0.1f;
  q.output_zero_point = 5;
  q.output_min = -100;
  q.output_max = 120;
  const size_t oh = out_size(
      c.in_h, s.pad_top, c.pad_bottom, s.kernel_h, s.stride_h, s.dilation_h);
  const size_t ow = out_size(
      c.in_w, s.pad_left, c.pad_right, s.kernel_w, s.stride_w, s.dilation_w);
  const std::vector<int8_t> want = reference(c, q, in, filter, bias, oh, ow);
  // Both clamp ends are reached, so the clamp is checked too.
  EXPECT_NE(std::find(want.begin(), want.end(), int8_t(-100)), want.end());
  EXPECT_NE(std::find(want.begin(), want.end(), int8_t(120)), want.end());

  Qs8DwConv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), bias.data()));
  expect_kernels_equal(conv, c, in, oh, ow, want);
}

Qs8ConvShape shape(size_t kh,
                   size_t kw,
                   size_t stride,
                   size_t dilation,
                   size_t pad,
                   size_t channels) {
  Qs8ConvShape s;
  s.kernel_h = kh;
  s.kernel_w = kw;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = pad;
  s.in_channels = s.out_channels = channels;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    Qs8DwConvTest,
    ::testing::Values(
        // MobileNet's: padding 1 on every edge; 20 channels (a partial
        // block), odd sizes, two images.
        Case{"k3_stride1_pad1_c20", shape(3, 3, 1, 1, 1, 20), 2, 7, 5, 1, 1},
        // Stride 2 with odd input sizes: the last row and column of padding
        // is not read.
        Case{"k3_stride2_pad1_c33", shape(3, 3, 2, 1, 1, 33), 1, 9, 11, 1, 1},
        // Stride 2 with even sizes, padding only after (TF "same").
        Case{"k3_stride2_pad0_c16", shape(3, 3, 2, 1, 0, 16), 1, 8, 10, 1, 1},
        // No padding; 1 channel.
        Case{"k3_stride1_pad0_c1", shape(3, 3, 1, 1, 0, 1), 1, 5, 6, 0, 0},
        // Dilation: a window spanning 5 rows.
        Case{"k3_dilation2_pad2_c16", shape(3, 3, 1, 2, 2, 16), 1, 7, 9, 2, 2},
        // Four taps in a row (a full lane), two rows; 70 channels (a tile
        // of 4 blocks, then one of a partial block).
        Case{"k2x4_stride1_pad1_c70", shape(2, 4, 1, 1, 1, 70), 1, 6, 7, 0, 2},
        // Tiles of four whole blocks (the vector kernel's interleaved
        // channels): the last block partial (60 channels; two images), two
        // tiles and a partial block after them (136), a dilated window.
        // (20 and 24 channels above, and 96's last tile, are tiles of two.)
        Case{"k3_stride1_pad1_c60", shape(3, 3, 1, 1, 1, 60), 2, 6, 9, 1, 1},
        Case{"k3_stride2_pad1_c136", shape(3, 3, 2, 1, 1, 136), 1, 9, 8, 1, 0},
        Case{"k3_dilation2_pad2_c64", shape(3, 3, 1, 2, 2, 64), 1, 7, 5, 2, 2},
        // Tiles of two whole blocks: two output columns per register, the
        // last one alone (odd width).
        Case{
            "k3_stride1_pad1_c32_odd", shape(3, 3, 1, 1, 1, 32), 1, 6, 7, 1, 1},
        // 1x1 and 5x1 kernels.
        Case{"k1_c48", shape(1, 1, 1, 1, 0, 48), 1, 3, 4, 0, 0},
        Case{"k5x1_stride1_pad2_c24", shape(5, 1, 1, 1, 2, 24), 1, 9, 4, 2, 0},
        // Wider than one tile of columns and taller than one of rows: the
        // tiles' quads start afresh at each edge.
        Case{"k3_stride1_pad1_c80_wide",
             shape(3, 3, 1, 1, 1, 80),
             1,
             19,
             150,
             1,
             1},
        // MobileNetV2's at 112x112 over 96 channels, stride 2: worth two
        // threads (the cases above run on one where the backend chooses).
        Case{"mobilenet_v2_k3_stride2_c96",
             shape(3, 3, 2, 1, 1, 96),
             1,
             112,
             112,
             0,
             0}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.name);
    });

// The backend splits a depthwise convolution across two threads only when
// each gets at least 5 us of estimated work: all of MobileNetV2's (11-122
// us on one thread) do, 32 channels at 7x7 (~0.4 us) do not.
TEST(Qs8DwConvCostTest, SplitsOnlyWorkWorthTwoThreads) {
  std::vector<int8_t> filter(9 * 960, 1);
  std::vector<float> scales(960, 0.01f);
  Qs8ConvQuant q;
  q.input_scale = q.output_scale = 1.0f;
  q.filter_scales = scales.data();
  auto splits = [&](size_t stride, size_t channels, size_t in) {
    Qs8DwConv conv;
    EXPECT_TRUE(conv.init(
        shape(3, 3, stride, 1, 1, channels), q, filter.data(), nullptr));
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

// Each output is bias * scale: ties round to even, as torch's quantize does,
// and values past the int8 range saturate at -128 and 127.
TEST(Qs8DwConvRequantizationTest, TiesRoundToEvenAndSaturate) {
  const size_t channels = 17;
  const Qs8ConvShape s = shape(3, 3, 1, 1, 1, channels);
  const std::vector<int8_t> filter(9 * channels, 1);
  // x - zero point = 0 everywhere (and padding adds nothing).
  const std::vector<int32_t> bias = {1,
                                     3,
                                     5,
                                     -1,
                                     -3,
                                     -5,
                                     254,
                                     255,
                                     256,
                                     -256,
                                     -257,
                                     -258,
                                     1000,
                                     -1000,
                                     0,
                                     7,
                                     -7};
  const std::vector<float> scales(channels, 0.5f);
  Qs8ConvQuant q;
  q.input_zero_point = 4;
  q.filter_scales = scales.data();
  const std::vector<int8_t> want_pixel = {
      0, 2, 2, 0, -2, -2, 127, 127, 127, -128, -128, -128, 127, -128, 0, 4, -4};
  const Case c{"ties", s, 1, 2, 3, 1, 1};
  const std::vector<int8_t> in(2 * 3 * channels, 4);
  std::vector<int8_t> want;
  for (size_t pixel = 0; pixel < 6; ++pixel) {
    want.insert(want.end(), want_pixel.begin(), want_pixel.end());
  }
  Qs8DwConv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), bias.data()));
  expect_kernels_equal(conv, c, in, 2, 3, want);
}

// A batch, output rows or columns of 0 write nothing.
TEST(Qs8DwConvEmptyTest, EmptyTensorsWriteNothing) {
  const Qs8ConvShape s = shape(3, 3, 1, 1, 1, 8);
  const std::vector<int8_t> filter(9 * 8, 1);
  const std::vector<float> scales(8, 1.0f);
  Qs8ConvQuant q;
  q.filter_scales = scales.data();
  Qs8DwConv conv;
  ASSERT_TRUE(conv.init(s, q, filter.data(), nullptr));
  const std::vector<int8_t> in(4 * 4 * 8, 1);
  for (bool vnni : {false, true}) {
    int8_t out[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    conv.run(in.data(), 0, 4, 4, out, 4, 4, nullptr, vnni);
    conv.run(in.data(), 1, 4, 4, out, 0, 4, nullptr, vnni);
    conv.run(in.data(), 1, 4, 4, out, 4, 0, nullptr, vnni);
    EXPECT_EQ(std::count(out, out + 8, 7), 8);
  }
}

TEST(Qs8DwConvInitTest, RefusesShapesAndBiasesItDoesNotTake) {
  const std::vector<int8_t> filter(9 * 5 * 4, 1);
  const std::vector<float> scales(4, 1.0f);
  Qs8ConvQuant q;
  q.filter_scales = scales.data();
  Qs8DwConv conv;
  // Five taps in a row do not fit a 32-bit lane.
  EXPECT_FALSE(conv.init(shape(1, 5, 1, 1, 0, 4), q, filter.data(), nullptr));
  // A window of 9 rows.
  EXPECT_FALSE(conv.init(shape(3, 3, 1, 4, 4, 4), q, filter.data(), nullptr));
  // Different input and output channel counts are not depthwise.
  Qs8ConvShape mismatch = shape(3, 3, 1, 1, 1, 4);
  mismatch.in_channels = 2;
  EXPECT_FALSE(conv.init(mismatch, q, filter.data(), nullptr));
  // A bias that sums of products could push past int32.
  const std::vector<int32_t> huge(4, 2147480000);
  EXPECT_FALSE(
      conv.init(shape(3, 3, 1, 1, 1, 4), q, filter.data(), huge.data()));
  EXPECT_TRUE(conv.init(shape(3, 3, 1, 1, 1, 4), q, filter.data(), nullptr));
}

// A depthwise node as upstream's partitioner writes an int8 MobileNet's
// (qcint8 filter [1, 3, 3, C] with scales along dim 3, qcint32 bias, ReLU6
// fused as the output clamp), run by the backend on the host kernel and,
// with EXECUTORCH_XNNPACK_HOST_KERNELS=0, on XNNPACK: both equal the scalar
// reference exactly (inputs on the quantization grid, so the converts are
// exact, and the same fp32 requantization).
TEST(Qs8DwConvNodeTest, HostKernelAndXnnpackEqualTheReference) {
  using executorch::backends::xnnpack::testing::BlobBuilder;
  using executorch::backends::xnnpack::testing::conv_params;
  using executorch::backends::xnnpack::testing::DelegateRunner;
  using executorch::backends::xnnpack::testing::input_tensor;
  using executorch::backends::xnnpack::testing::NodeKind;
  using executorch::backends::xnnpack::testing::output_tensor;
  using executorch::backends::xnnpack::testing::TensorPtr;
  using executorch::backends::xnnpack::testing::ValueDesc;
  using executorch::backends::xnnpack::testing::values_of;
  using fb_xnnpack::XNNDatatype;

  const uint32_t channels = 24, in_h = 9, in_w = 8, out_h = 5, out_w = 4;
  const float in_scale = 0.05f, out_scale = 0.08f;
  const int32_t in_zero = 3, out_zero = -5;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::vector<int8_t> filter(9 * channels);
  std::vector<float> filter_scales(channels), bias_scales(channels);
  std::vector<int32_t> bias(channels);
  for (auto& v : filter)
    v = static_cast<int8_t>(byte(rng));
  for (uint32_t c = 0; c < channels; ++c) {
    filter_scales[c] = 0.004f + 0.001f * c;
    bias_scales[c] = in_scale * filter_scales[c];
    bias[c] = std::uniform_int_distribution<int32_t>(-2000, 2000)(rng);
  }
  std::vector<int8_t> xq(in_h * in_w * channels);
  std::vector<float> x(xq.size());
  for (size_t i = 0; i < xq.size(); ++i) {
    xq[i] = static_cast<int8_t>(byte(rng));
    x[i] = (xq[i] - in_zero) * in_scale;
  }
  auto bytes_of = [](const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    return std::vector<uint8_t>(p, p + n);
  };

  BlobBuilder b;
  const uint32_t input = b.input({1, in_h, in_w, channels}, 0);
  const uint32_t x_q = b.tensor({1, in_h, in_w, channels});
  b.values()[x_q].datatype = XNNDatatype::xnn_datatype_qint8;
  b.values()[x_q].per_tensor = {{in_scale, in_zero}};
  const uint32_t w = b.tensor({1, 3, 3, channels});
  ValueDesc& wv = b.values()[w];
  wv.datatype = XNNDatatype::xnn_datatype_qcint8;
  wv.is_constant = true;
  wv.bytes = bytes_of(filter.data(), filter.size());
  wv.channel_scales = filter_scales;
  wv.channel_dim = 3;
  const uint32_t bias_id = b.tensor({channels});
  ValueDesc& bv = b.values()[bias_id];
  bv.datatype = XNNDatatype::xnn_datatype_qcint32;
  bv.is_constant = true;
  bv.bytes = bytes_of(bias.data(), bias.size() * sizeof(int32_t));
  bv.channel_scales = bias_scales;
  const uint32_t y_q = b.tensor({1, out_h, out_w, channels});
  b.values()[y_q].datatype = XNNDatatype::xnn_datatype_qint8;
  b.values()[y_q].per_tensor = {{out_scale, out_zero}};
  const uint32_t output = b.output({1, out_h, out_w, channels}, 1);
  b.node(NodeKind::XNNConvert, {input}, x_q);
  b.node(NodeKind::XNNDepthwiseConv2d,
         {x_q, w, bias_id},
         y_q,
         conv_params(3, 2, 1, 1, channels, 1, 1),
         std::make_pair(0.0f, 6.0f));
  b.node(NodeKind::XNNConvert, {y_q}, output);
  const std::vector<uint8_t> blob = b.build();

  Case c{"node", shape(3, 3, 2, 1, 1, channels), 1, in_h, in_w, 1, 1};
  Qs8ConvQuant q;
  q.input_scale = in_scale;
  q.input_zero_point = in_zero;
  q.filter_scales = filter_scales.data();
  q.output_scale = out_scale;
  q.output_zero_point = out_zero;
  q.output_min = out_zero; // 0.0 quantized
  q.output_max =
      static_cast<int32_t>(std::nearbyint(6.0f / out_scale)) + out_zero;
  const std::vector<int8_t> want_q =
      reference(c, q, xq, filter, bias, out_h, out_w);
  std::vector<float> want(want_q.size());
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = (want_q[i] - out_zero) * out_scale;
  }

  for (const char* host_kernels : {"1", "0"}) {
    setenv("EXECUTORCH_XNNPACK_HOST_KERNELS", host_kernels, 1);
    DelegateRunner runner;
    ASSERT_EQ(runner.init(blob), executorch::runtime::Error::Ok);
    TensorPtr in = input_tensor({1, in_h, in_w, channels}, x);
    TensorPtr out = output_tensor({1, out_h, out_w, channels});
    ASSERT_EQ(runner.run({in}, {out}), executorch::runtime::Error::Ok);
    EXPECT_EQ(values_of(out), want)
        << "EXECUTORCH_XNNPACK_HOST_KERNELS=" << host_kernels;
  }
  unsetenv("EXECUTORCH_XNNPACK_HOST_KERNELS");
}

} // namespace
