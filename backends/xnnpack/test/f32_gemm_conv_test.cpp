// The host fp32 GEMM convolution (runtime/f32_gemm_conv.h) against a direct
// convolution in double: 3x3 at strides 1 and 2 with padding, a dilated
// 3x3, a 1x1 read in place and a strided 1x1 (im2col), batch 2, output
// channel counts that are not multiples of the GEMM's panel, a clamp and no
// bias, on one thread and two. Then a convolution node whose filter is past
// F32GemmConv::kMinFilterBytes, run by the backend: on the host its output
// is bit for bit the kernel's, and with EXECUTORCH_XNNPACK_HOST_KERNELS=0
// (XNNPACK) it is not (XNNPACK sums in another order), which shows the node
// was taken.
//
// Tolerance: |got - ref| <= 1e-5 * S, S the largest sum of |w * x| over a
// window: each output sums up to 2304 products in fp32 in another order
// than the reference.

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/f32_gemm_conv.h>
#include <executorch/backends/xnnpack/runtime/threadpool.h>
#include <executorch/backends/xnnpack/test/test_util.h>

namespace {

using executorch::backends::xnnpack::F32GemmConv;
using executorch::backends::xnnpack::F32GemmConvShape;
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

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  F32GemmConvShape shape;
  size_t batch, in_h, in_w;
  bool bias;
};

size_t out_size(
    size_t in, size_t kernel, size_t stride, size_t dilation, size_t pad) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

// The exact output (symmetric padding) and S (above).
std::vector<double> reference(const Case& c,
                              const std::vector<float>& x,
                              const std::vector<float>& filter,
                              const std::vector<float>& bias,
                              double* scale) {
  const F32GemmConvShape& s = c.shape;
  const size_t oh =
      out_size(c.in_h, s.kernel_h, s.stride_h, s.dilation_h, s.pad_top);
  const size_t ow =
      out_size(c.in_w, s.kernel_w, s.stride_w, s.dilation_w, s.pad_left);
  std::vector<double> out(c.batch * oh * ow * s.out_channels);
  *scale = 1e-6;
  for (size_t n = 0; n < c.batch; ++n)
    for (size_t y = 0; y < oh; ++y)
      for (size_t xo = 0; xo < ow; ++xo)
        for (size_t k = 0; k < s.out_channels; ++k) {
          double sum = c.bias ? bias[k] : 0.0;
          double magnitude = std::fabs(sum);
          for (size_t ky = 0; ky < s.kernel_h; ++ky)
            for (size_t kx = 0; kx < s.kernel_w; ++kx) {
              const int64_t iy = int64_t(y * s.stride_h + ky * s.dilation_h) -
                                 int64_t(s.pad_top);
              const int64_t ix = int64_t(xo * s.stride_w + kx * s.dilation_w) -
                                 int64_t(s.pad_left);
              if (iy < 0 || ix < 0 || iy >= int64_t(c.in_h) ||
                  ix >= int64_t(c.in_w)) {
                continue;
              }
              for (size_t ci = 0; ci < s.in_channels; ++ci) {
                const double term =
                    double(filter[((k * s.kernel_h + ky) * s.kernel_w + kx) *
                                      s.in_channels +
                                  ci]) *
                    x[((n * c.in_h + iy) * c.in_w + ix) * s.in_channels + ci];
                sum += term;
                magnitude += std::fabs(term);
              }
            }
          out[((n * oh + y) * ow + xo) * s.out_channels + k] = std::min<double>(
              std::max<double>(sum, s.output_min), s.output_max);
          *scale = std::max(*scale, magnitude);
        }
  return out;
}

F32GemmConvShape shape_of(size_t kernel,
                          size_t stride,
                          size_t dilation,
                          size_t pad,
                          size_t in_c,
                          size_t out_c,
                          float min = -kInf,
                          float max = kInf) {
  F32GemmConvShape s;
  s.kernel_h = s.kernel_w = kernel;
  s.stride_h = s.stride_w = stride;
  s.dilation_h = s.dilation_w = dilation;
  s.pad_top = s.pad_left = pad;
  s.in_channels = in_c;
  s.out_channels = out_c;
  s.output_min = min;
  s.output_max = max;
  return s;
}

TEST(F32GemmConvTest, MatchesADirectConvolution) {
  const Case cases[] = {
      {shape_of(3, 1, 1, 1, 19, 37, 0.0f, 0.75f), 2, 7, 9, true},
      {shape_of(3, 2, 1, 1, 32, 64), 1, 14, 14, true},
      {shape_of(3, 1, 2, 2, 8, 21), 1, 9, 8, false},
      {shape_of(1, 1, 1, 0, 40, 50, -0.5f, kInf), 2, 5, 6, true},
      {shape_of(1, 2, 1, 0, 24, 70), 1, 9, 7, false},
  };
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  for (const Case& c : cases) {
    const F32GemmConvShape& s = c.shape;
    const auto x = random_values(
        c.batch * c.in_h * c.in_w * s.in_channels, -1.0f, 1.0f, 1);
    const auto filter =
        random_values(s.out_channels * s.kernel_h * s.kernel_w * s.in_channels,
                      -1.0f,
                      1.0f,
                      2);
    const auto bias = random_values(s.out_channels, -1.0f, 1.0f, 3);
    double scale = 0.0;
    const std::vector<double> want = reference(c, x, filter, bias, &scale);
    F32GemmConv conv;
    ASSERT_TRUE(conv.init(s, filter.data(), c.bias ? bias.data() : nullptr));
    const size_t oh =
        out_size(c.in_h, s.kernel_h, s.stride_h, s.dilation_h, s.pad_top);
    const size_t ow =
        out_size(c.in_w, s.kernel_w, s.stride_w, s.dilation_w, s.pad_left);
    for (pthreadpool_t p : {pthreadpool_t{nullptr}, pool}) {
      std::vector<float> got(want.size(), std::nanf(""));
      ASSERT_TRUE(
          conv.run(x.data(), c.batch, c.in_h, c.in_w, got.data(), oh, ow, p));
      size_t bad = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        if (!(std::fabs(got[i] - want[i]) <= 1e-5 * scale) && ++bad <= 3) {
          ADD_FAILURE() << s.kernel_h << "x" << s.kernel_w << " stride "
                        << s.stride_h << ", " << s.out_channels << " channels, "
                        << (p == nullptr ? 1 : 2) << " threads: [" << i
                        << "] got " << got[i] << " expected " << want[i];
        }
      }
      EXPECT_EQ(bad, 0u);
    }
  }
  pthreadpool_destroy(pool);
}

TEST(F32GemmConvTest, ATransposedFilterIsAFullyConnectedLayer) {
  // A fully connected node with XNN_FLAG_TRANSPOSE_WEIGHTS: filter [in,
  // out], rows as pixels; 9 rows, and 1 as in an LLM's decode step.
  for (const size_t rows : {size_t{9}, size_t{1}}) {
    const Case c{shape_of(1, 1, 1, 0, 40, 50), 1, rows, 1, true};
    const F32GemmConvShape& s = c.shape;
    const auto x = random_values(rows * s.in_channels, -1.0f, 1.0f, 7);
    const auto filter =
        random_values(s.out_channels * s.in_channels, -1.0f, 1.0f, 8);
    const auto bias = random_values(s.out_channels, -1.0f, 1.0f, 9);
    std::vector<float> transposed(filter.size());
    for (size_t o = 0; o < s.out_channels; ++o) {
      for (size_t i = 0; i < s.in_channels; ++i) {
        transposed[i * s.out_channels + o] = filter[o * s.in_channels + i];
      }
    }
    double scale = 0.0;
    const std::vector<double> want = reference(c, x, filter, bias, &scale);
    F32GemmConvShape fc = s;
    fc.filter_transposed = true;
    F32GemmConv conv;
    ASSERT_TRUE(conv.init(fc, transposed.data(), bias.data()));
    std::vector<float> got(want.size(), std::nanf(""));
    ASSERT_TRUE(conv.run(x.data(), 1, rows, 1, got.data(), rows, 1, nullptr));
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_LE(std::fabs(got[i] - want[i]), 1e-5 * scale)
          << rows << " rows: [" << i << "] got " << got[i] << " expected "
          << want[i];
    }
  }
}

TEST(F32GemmConvTest, RefusesZeroSizes) {
  const std::vector<float> filter(9, 1.0f);
  F32GemmConv conv;
  EXPECT_FALSE(conv.init(shape_of(3, 1, 1, 1, 0, 1), filter.data(), nullptr));
  EXPECT_FALSE(conv.init(shape_of(3, 0, 1, 1, 1, 1), filter.data(), nullptr));
  EXPECT_FALSE(conv.init(shape_of(3, 1, 1, 1, 1, 1), nullptr, nullptr));
}

TEST(F32GemmConvTest, ALargeFilterNodeRunsOnTheHostKernel) {
  // 3x3, 256 -> 272 channels: 2.5 MB of filter, past kMinFilterBytes.
  const uint32_t in_c = 256, out_c = 272, h = 5, w = 6;
  ASSERT_GE(size_t{out_c} * 9 * in_c * sizeof(float),
            F32GemmConv::kMinFilterBytes);
  const auto x = random_values(size_t{h} * w * in_c, -1.0f, 1.0f, 4);
  const auto filter = random_values(size_t{out_c} * 9 * in_c, -1.0f, 1.0f, 5);
  const auto bias = random_values(out_c, -1.0f, 1.0f, 6);
  BlobBuilder b;
  const uint32_t input = b.input({1, h, w, in_c}, 0);
  const uint32_t wv = b.constant({out_c, 3, 3, in_c}, filter);
  const uint32_t bv = b.constant({out_c}, bias);
  const uint32_t output = b.output({1, h, w, out_c}, 1);
  b.node(NodeKind::XNNConv2d,
         {input, wv, bv},
         output,
         conv_params(3, 1, 1, 1, 1, in_c, out_c),
         std::make_pair(-1.0f, 6.0f));
  const std::vector<uint8_t> blob = b.build();

  F32GemmConv conv;
  ASSERT_TRUE(conv.init(shape_of(3, 1, 1, 1, in_c, out_c, -1.0f, 6.0f),
                        filter.data(),
                        bias.data()));
  std::vector<float> kernel_out(size_t{h} * w * out_c);
  ASSERT_TRUE(conv.run(x.data(), 1, h, w, kernel_out.data(), h, w, nullptr));

  for (const char* host_kernels : {"1", "0"}) {
    setenv("EXECUTORCH_XNNPACK_HOST_KERNELS", host_kernels, 1);
    set_default_num_threads(1);
    DelegateRunner runner;
    ASSERT_EQ(runner.init(blob), executorch::runtime::Error::Ok);
    TensorPtr in = input_tensor({1, int32_t(h), int32_t(w), int32_t(in_c)}, x);
    TensorPtr out = output_tensor({1, int32_t(h), int32_t(w), int32_t(out_c)});
    ASSERT_EQ(runner.run({in}, {out}), executorch::runtime::Error::Ok);
    const std::vector<float> got = values_of(out);
    const bool same =
        std::memcmp(
            got.data(), kernel_out.data(), got.size() * sizeof(float)) == 0;
    EXPECT_EQ(same, host_kernels[0] == '1')
        << "EXECUTORCH_XNNPACK_HOST_KERNELS=" << host_kernels;
    // Either way, the convolution's values (S <= 9 * 256 terms of at most
    // 1 in magnitude).
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], kernel_out[i], 1e-5 * 9 * in_c) << "at " << i;
    }
  }
  unsetenv("EXECUTORCH_XNNPACK_HOST_KERNELS");
  set_default_num_threads(0);
}

} // namespace

#endif // EXECUTORCH_XNNPACK_OPTIMIZED_HOST
