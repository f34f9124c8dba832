// Convolution, pooling, softmax and layer norm against values computed
// with PyTorch eager on the same inputs.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

namespace {

std::vector<float> iota(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(i) * scale + offset;
  }
  return v;
}

void expect_near(const std::vector<float>& actual,
                 const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-4) << "at " << i;
  }
}

} // namespace

TEST(OpConvolutionTest, Conv2dStridePaddingBias) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {2, 2, 4, 4}, iota(64, 0.1f, -1.0f));
  std::vector<float> wv(54);
  for (size_t i = 0; i < wv.size(); ++i) {
    wv[i] = static_cast<float>(i % 5) / 4 - 0.5f;
  }
  TestTensor w(ScalarType::Float, {3, 2, 3, 3}, wv);
  TestTensor b(ScalarType::Float, {3}, std::vector<float>{0.1f, -0.2f, 0.3f});
  TestTensor out(ScalarType::Float, {2, 3, 2, 2}, zeros(24));
  const int64_t stride[] = {2, 2}, pad[] = {1, 1}, dil[] = {1, 1};
  native::convolution_out(ctx,
                          x,
                          w,
                          std::optional<Tensor>(b.tensor()),
                          IntArrayRef(stride),
                          IntArrayRef(pad),
                          IntArrayRef(dil),
                          false,
                          IntArrayRef(),
                          1,
                          out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {0.175, -0.325, 0.15,  -0.15, -0.2,  -0.45, -0.05, -0.275,
               0.85,  0.35,   0.675, 0.15,  2.575, 0.475, -0.65, -2.55,
               -2.6,  -2.85,  -0.05, 0.525, 1.65,  2.75,  1.475, 0.15});
}

TEST(OpConvolutionTest, Conv1dGroupsDilation) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {1, 4, 5}, iota(20, 1.0f / 7, 0));
  std::vector<float> wv(16);
  for (size_t i = 0; i < wv.size(); ++i) {
    wv[i] = static_cast<float>(i % 3) - 1;
  }
  TestTensor w(ScalarType::Float, {4, 2, 2}, wv);
  TestTensor out(ScalarType::Float, {1, 4, 5}, zeros(20));
  const int64_t stride[] = {1}, pad[] = {1}, dil[] = {2};
  native::convolution_out(ctx,
                          x,
                          w,
                          std::nullopt,
                          IntArrayRef(stride),
                          IntArrayRef(pad),
                          IntArrayRef(dil),
                          false,
                          IntArrayRef(),
                          2,
                          out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {-0.8571, -0.2857, -0.4286, -0.5714, 0.7143, 0.1429, -0.4286,
               -0.4286, -0.4286, -1.1429, 0.7143,  2.1429, 2.2857, 2.4286,
               1.8571,  -2.2857, -1.7143, -1.8571, -2.0,   0.7143});
}

TEST(OpConvolutionTest, ChannelMismatchFails) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {1, 3, 4, 4}, zeros(48));
  TestTensor w(ScalarType::Float, {2, 2, 3, 3}, zeros(36));
  TestTensor out(ScalarType::Float, {1, 2, 2, 2}, zeros(8));
  const int64_t one[] = {1}, zero[] = {0};
  native::convolution_out(ctx,
                          x,
                          w,
                          std::nullopt,
                          IntArrayRef(one),
                          IntArrayRef(zero),
                          IntArrayRef(one),
                          false,
                          IntArrayRef(),
                          1,
                          out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

namespace {
const std::vector<float> kPoolInput = {1, 5, 2, 0, 3, 4, -1, 7, 2, 2, 0, 3, 3,
                                       9, 1, 2, 2, 8, 1, 0,  5, 1, 0, 4, 6};
}

TEST(OpPoolTest, MaxPoolCeilModeWithIndices) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {1, 1, 5, 5}, kPoolInput);
  TestTensor out(ScalarType::Float, {1, 1, 3, 3}, zeros(9));
  TestTensor idx(ScalarType::Long, {1, 1, 3, 3}, std::vector<int64_t>(9));
  const int64_t k[] = {3}, s[] = {2}, p[] = {1}, d[] = {1};
  native::max_pool2d_with_indices_out(ctx,
                                      x,
                                      IntArrayRef(k),
                                      IntArrayRef(s),
                                      IntArrayRef(p),
                                      IntArrayRef(d),
                                      true,
                                      out,
                                      idx);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(), {5, 7, 3, 4, 9, 9, 5, 8, 6});
  EXPECT_EQ(idx.values<int64_t>(),
            (std::vector<int64_t>{1, 7, 4, 5, 13, 13, 20, 17, 24}));
}

TEST(OpPoolTest, AvgPoolPaddingRules) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {1, 1, 5, 5}, kPoolInput);
  TestTensor out(ScalarType::Float, {1, 1, 3, 3}, zeros(9));
  const int64_t k3[] = {3}, k2[] = {2}, s[] = {2}, p[] = {1};
  native::avg_pool2d_out(ctx,
                         x,
                         IntArrayRef(k3),
                         IntArrayRef(s),
                         IntArrayRef(p),
                         true,
                         false,
                         std::nullopt,
                         out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {2.25, 2.5, 1.75, 1.6667, 3.7778, 2.5, 2.5, 2.6667, 2.75});
  native::avg_pool2d_out(ctx,
                         x,
                         IntArrayRef(k2),
                         IntArrayRef(s),
                         IntArrayRef(p),
                         false,
                         true,
                         std::nullopt,
                         out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {0.25, 1.75, 0.75, 1.0, 3.0, 3.5, 1.75, 2.75, 2.75});
}

TEST(OpSoftmaxTest, SoftmaxAndLogSoftmax) {
  KernelRuntimeContext ctx;
  TestTensor x(
      ScalarType::Float, {2, 3}, std::vector<float>{1, 2, 3, -1, 0, 1});
  TestTensor out(ScalarType::Float, {2, 3}, zeros(6));
  native::softmax_out(ctx, x, 0, false, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {0.8808, 0.8808, 0.8808, 0.1192, 0.1192, 0.1192});
  native::log_softmax_out(ctx, x, -1, false, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {-2.40761, -1.40761, -0.40761, -2.40761, -1.40761, -0.40761});
}

TEST(OpLayerNormTest, AffineWithStatistics) {
  KernelRuntimeContext ctx;
  TestTensor x(
      ScalarType::Float, {2, 3}, std::vector<float>{1, 2, 3, -1, 0, 1});
  TestTensor w(ScalarType::Float, {3}, std::vector<float>{1, 2, 3});
  TestTensor b(ScalarType::Float, {3}, std::vector<float>{0, 1, 0});
  TestTensor out(ScalarType::Float, {2, 3}, zeros(6));
  TestTensor mean(ScalarType::Float, {2, 1}, zeros(2));
  TestTensor rstd(ScalarType::Float, {2, 1}, zeros(2));
  const int64_t shape[] = {3};
  native::native_layer_norm_out(ctx,
                                x,
                                IntArrayRef(shape),
                                std::optional<Tensor>(w.tensor()),
                                std::optional<Tensor>(b.tensor()),
                                1e-5,
                                out,
                                mean,
                                rstd);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  expect_near(out.values<float>(),
              {-1.22474, 1.0, 3.67421, -1.22474, 1.0, 3.67421});
  expect_near(mean.values<float>(), {2, 0});
}

// Exporters keep channels-last dim orders (upstream ExecuTorch's does): the
// forward kernels give the same values for the same logical tensors.
namespace {

const std::vector<uint8_t> kChannelsLast = {0, 2, 3, 1};

// Values of a contiguous [n, c, h, w] tensor in channels-last memory order.
std::vector<float> to_channels_last(const std::vector<float>& v,
                                    int n,
                                    int c,
                                    int hw) {
  std::vector<float> result(v.size());
  for (int b = 0; b < n; ++b) {
    for (int ch = 0; ch < c; ++ch) {
      for (int i = 0; i < hw; ++i) {
        result[(b * hw + i) * c + ch] = v[(b * c + ch) * hw + i];
      }
    }
  }
  return result;
}

} // namespace

TEST(OpChannelsLastTest, ConvolutionAndTransposed) {
  const std::vector<float> xv = iota(2 * 4 * 5 * 5, 0.03f, -1.5f);
  const std::vector<float> wv = iota(6 * 2 * 3 * 3, -0.02f, 0.7f);
  const int64_t stride[] = {2, 1}, pad[] = {1, 0}, dil[] = {1, 1};
  for (const bool transposed : {false, true}) {
    // Plain: weight [6, 2, 3, 3] over 4 channels in 2 groups, out 6
    // channels. Transposed: weight [4, 3, 3, 3] (same values), out 6.
    const std::vector<int32_t> w_sizes = transposed
                                             ? std::vector<int32_t>{4, 3, 3, 3}
                                             : std::vector<int32_t>{6, 2, 3, 3};
    const std::vector<int32_t> out_sizes =
        transposed ? std::vector<int32_t>{2, 6, 9, 7}
                   : std::vector<int32_t>{2, 6, 3, 3};
    const int out_hw = out_sizes[2] * out_sizes[3];
    const size_t out_numel = 2 * 6 * out_hw;
    KernelRuntimeContext ctx;
    TestTensor x(ScalarType::Float, {2, 4, 5, 5}, xv);
    TestTensor w(ScalarType::Float, w_sizes, wv);
    TestTensor out(ScalarType::Float, out_sizes, zeros(out_numel));
    TestTensor x_cl(ScalarType::Float,
                    {2, 4, 5, 5},
                    to_channels_last(xv, 2, 4, 25),
                    DYN::STATIC,
                    kChannelsLast);
    TestTensor w_cl(ScalarType::Float,
                    w_sizes,
                    to_channels_last(wv, w_sizes[0], w_sizes[1], 9),
                    DYN::STATIC,
                    kChannelsLast);
    TestTensor out_cl(ScalarType::Float,
                      out_sizes,
                      zeros(out_numel),
                      DYN::STATIC,
                      kChannelsLast);
    for (auto* run : {&x, &x_cl}) {
      const bool cl = run == &x_cl;
      native::convolution_out(ctx,
                              *run,
                              cl ? w_cl : w,
                              std::nullopt,
                              IntArrayRef(stride),
                              IntArrayRef(pad),
                              IntArrayRef(dil),
                              transposed,
                              IntArrayRef(),
                              2,
                              cl ? out_cl : out);
      ASSERT_EQ(ctx.failure_state(), Error::Ok);
    }
    expect_near(out_cl.values<float>(),
                to_channels_last(out.values<float>(), 2, 6, out_hw));
  }
}

TEST(OpChannelsLastTest, BatchNormAndPooling) {
  const std::vector<float> xv = iota(2 * 3 * 5 * 5, 0.37f, -9.0f);
  TestTensor x(ScalarType::Float,
               {2, 3, 5, 5},
               to_channels_last(xv, 2, 3, 25),
               DYN::STATIC,
               kChannelsLast);
  TestTensor mean(ScalarType::Float, {3}, std::vector<float>{1, -2, 0.5});
  TestTensor var(ScalarType::Float, {3}, std::vector<float>{4, 0.25, 1});
  TestTensor weight(ScalarType::Float, {3}, std::vector<float>{2, 1, -1});
  KernelRuntimeContext ctx;
  TestTensor bn(
      ScalarType::Float, {2, 3, 5, 5}, zeros(150), DYN::STATIC, kChannelsLast);
  TestTensor save_mean(ScalarType::Float, {0}, zeros(0), DYN::DYNAMIC_BOUND);
  TestTensor save_invstd(ScalarType::Float, {0}, zeros(0), DYN::DYNAMIC_BOUND);
  native::_native_batch_norm_legit_no_training_out(
      ctx,
      x,
      std::optional<Tensor>(weight.tensor()),
      std::nullopt,
      mean,
      var,
      0.1,
      0.0,
      bn,
      save_mean,
      save_invstd);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const float m[] = {1, -2, 0.5}, sd[] = {2, 0.5, 1}, wt[] = {2, 1, -1};
  std::vector<float> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t c = i / 25 % 3;
    want[i] = (xv[i] - m[c]) / sd[c] * wt[c];
  }
  expect_near(bn.values<float>(), to_channels_last(want, 2, 3, 25));

  // Pooling: against the contiguous kernels on the same logical input.
  TestTensor x_nchw(ScalarType::Float, {2, 3, 5, 5}, xv);
  const int64_t k[] = {3}, s[] = {2}, p[] = {1}, d[] = {1};
  std::vector<float> max_values[2], avg_values[2];
  std::vector<int64_t> indices[2];
  for (int cl = 0; cl < 2; ++cl) {
    const std::vector<uint8_t> order =
        cl ? kChannelsLast : std::vector<uint8_t>{};
    TestTensor out(
        ScalarType::Float, {2, 3, 3, 3}, zeros(54), DYN::STATIC, order);
    TestTensor idx(ScalarType::Long,
                   {2, 3, 3, 3},
                   std::vector<int64_t>(54),
                   DYN::STATIC,
                   order);
    Tensor& in = cl ? x.tensor() : x_nchw.tensor();
    native::max_pool2d_with_indices_out(ctx,
                                        in,
                                        IntArrayRef(k),
                                        IntArrayRef(s),
                                        IntArrayRef(p),
                                        IntArrayRef(d),
                                        false,
                                        out,
                                        idx);
    ASSERT_EQ(ctx.failure_state(), Error::Ok);
    max_values[cl] = out.values<float>();
    indices[cl] = idx.values<int64_t>();
    native::avg_pool2d_out(ctx,
                           in,
                           IntArrayRef(k),
                           IntArrayRef(s),
                           IntArrayRef(p),
                           false,
                           true,
                           std::nullopt,
                           out);
    ASSERT_EQ(ctx.failure_state(), Error::Ok);
    avg_values[cl] = out.values<float>();
  }
  expect_near(max_values[1], to_channels_last(max_values[0], 2, 3, 9));
  expect_near(avg_values[1], to_channels_last(avg_values[0], 2, 3, 9));
  std::vector<float> idx_nchw(indices[0].begin(), indices[0].end());
  std::vector<float> idx_cl(indices[1].begin(), indices[1].end());
  expect_near(idx_cl, to_channels_last(idx_nchw, 2, 3, 9));
}
