// Layer and batch norm (cpu/op_norm.cpp) against values computed with
// PyTorch eager, channels-last, and the layer norm backward pass.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::ArrayRef;
using ::executorch::aten::IntArrayRef;

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

TEST(OpGradientTest, LayerNormBackwardRowsSumToZero) {
  TempContext context;
  KernelRuntimeContext& ctx = context.get();
  TestTensor x(ScalarType::Float, {2, 3}, floats({1, 2, 4, -1, 0, 3}));
  TestTensor y(ScalarType::Float, {2, 3}, zeros(6));
  TestTensor mean(ScalarType::Float, {2, 1}, zeros(2));
  TestTensor rstd(ScalarType::Float, {2, 1}, zeros(2));
  const int64_t shape[] = {3};
  native::native_layer_norm_out(ctx,
                                x,
                                IntArrayRef(shape),
                                std::nullopt,
                                std::nullopt,
                                1e-5,
                                y,
                                mean,
                                rstd);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  TestTensor grad(ScalarType::Float, {2, 3}, floats({1, 0, 2, -1, 3, 1}));
  TestTensor gi(ScalarType::Float, {2, 3}, zeros(6));
  TestTensor gw(ScalarType::Float, {3}, zeros(3));
  TestTensor gb(ScalarType::Float, {3}, zeros(3));
  const bool mask[] = {true, true, true};
  native::native_layer_norm_backward_out(ctx,
                                         grad,
                                         x,
                                         IntArrayRef(shape),
                                         mean,
                                         rstd,
                                         std::nullopt,
                                         std::nullopt,
                                         ArrayRef<bool>(mask, 3),
                                         gi,
                                         gw,
                                         gb);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  // Normalizing removes the mean, so each row's input gradient sums to 0.
  const std::vector<float> dx = gi.values<float>();
  EXPECT_NEAR(dx[0] + dx[1] + dx[2], 0, 1e-5);
  EXPECT_NEAR(dx[3] + dx[4] + dx[5], 0, 1e-5);
  EXPECT_EQ(gb.values<float>(), floats({0, 3, 3}));
  // grad_weight = sum over rows of grad * normalized input.
  const std::vector<float> normalized = y.values<float>();
  for (int j = 0; j < 3; ++j) {
    const float expected = grad.values<float>()[j] * normalized[j] +
                           grad.values<float>()[3 + j] * normalized[3 + j];
    EXPECT_NEAR(gw.values<float>()[j], expected, 1e-5) << j;
  }
}
