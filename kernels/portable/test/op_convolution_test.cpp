// Convolution (cpu/op_convolution.cpp) against values computed with
// PyTorch eager: strides, padding, groups, dilation, channels-last, int64,
// the backward pass and bad channel counts.

#include <limits>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::ArrayRef;
using ::executorch::aten::IntArrayRef;

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

// Found by fuzz_program (UBSan): groups of -(2^63 - 1) overflowed in
// weight channels times groups before groups was checked.
TEST(OpConvolutionTest, GroupsOutOfRangeFail) {
  for (const bool transposed : {false, true}) {
    for (const int64_t groups : {-std::numeric_limits<int64_t>::max(),
                                 int64_t{0},
                                 std::numeric_limits<int64_t>::max(),
                                 int64_t{1} << 31}) {
      KernelRuntimeContext ctx;
      TestTensor x(ScalarType::Float, {1, 2, 4, 4}, zeros(32));
      TestTensor w(ScalarType::Float, {2, 2, 3, 3}, zeros(36));
      TestTensor out(ScalarType::Float, {1, 2, 2, 2}, zeros(8));
      const int64_t one[] = {1, 1}, zero[] = {0, 0};
      native::convolution_out(ctx,
                              x,
                              w,
                              std::nullopt,
                              IntArrayRef(one),
                              IntArrayRef(zero),
                              IntArrayRef(one),
                              transposed,
                              IntArrayRef(zero),
                              groups,
                              out);
      EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument) << groups;
    }
  }
}

TEST(OpConvolutionTest, OutputSizePastInt32Fails) {
  // Found by fuzz_program (ASan): padding 2^61 + 1 gave an output width of
  // 2^62 + 4, which truncated to 4 as a tensor size, so the static output
  // [1, 3, 4, 4] "fit" and the loops ran past it.
  const int64_t huge = (int64_t(1) << 61) + 1;
  for (const int64_t pad_w : {huge, int64_t(1) << 31}) {
    KernelRuntimeContext ctx;
    TestTensor x(ScalarType::Float, {1, 2, 4, 4}, zeros(32));
    TestTensor w(ScalarType::Float, {3, 2, 3, 3}, zeros(54));
    TestTensor out(ScalarType::Float, {1, 3, 4, 4}, zeros(48));
    const int64_t one[] = {1, 1}, pad[] = {1, pad_w};
    native::convolution_out(ctx,
                            x,
                            w,
                            std::nullopt,
                            IntArrayRef(one),
                            IntArrayRef(pad),
                            IntArrayRef(one),
                            false,
                            IntArrayRef(),
                            1,
                            out);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument) << pad_w;
  }
}

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

TEST(OpIndexDtypeTest, Conv1dOnInt64) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Long, {1, 1, 3}, floats({1, 2, 3}));
  TestTensor w(ScalarType::Long, {1, 1, 2}, floats({1, -1}));
  TestTensor out(ScalarType::Long, {1, 1, 2}, zeros(2));
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
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), floats({-1, -1}));
}

TEST(OpGradientTest, ConvolutionBackwardOfOneByOneConv) {
  KernelRuntimeContext ctx;
  TestTensor grad(ScalarType::Float, {1, 1, 1, 2}, floats({1, 1}));
  TestTensor x(ScalarType::Float, {1, 1, 1, 2}, floats({1, 2}));
  TestTensor w(ScalarType::Float, {1, 1, 1, 1}, floats({3}));
  TestTensor gi(ScalarType::Float, {1, 1, 1, 2}, zeros(2));
  TestTensor gw(ScalarType::Float, {1, 1, 1, 1}, zeros(1));
  TestTensor gb(ScalarType::Float, {1}, zeros(1));
  const int64_t one[] = {1, 1}, zero[] = {0, 0};
  const bool mask[] = {true, true, true};
  native::convolution_backward_out(ctx,
                                   grad,
                                   x,
                                   w,
                                   std::nullopt,
                                   IntArrayRef(one),
                                   IntArrayRef(zero),
                                   IntArrayRef(one),
                                   false,
                                   IntArrayRef(zero),
                                   1,
                                   ArrayRef<bool>(mask, 3),
                                   gi,
                                   gw,
                                   gb);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(gi.values<float>(), floats({3, 3}));
  EXPECT_EQ(gw.values<float>(), floats({3}));
  EXPECT_EQ(gb.values<float>(), floats({2}));
}
