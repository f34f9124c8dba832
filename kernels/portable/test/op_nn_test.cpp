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
