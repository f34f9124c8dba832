// Gradient, random and index-dtype edge cases of the portable kernels that
// need no exporter: expected values worked out by hand, bad arguments
// failing the context instead of crashing.

#include <algorithm>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::ArrayRef;
using ::executorch::aten::IntArrayRef;

namespace {

std::vector<float> floats(std::initializer_list<float> v) {
  return std::vector<float>(v);
}

} // namespace

TEST(OpIndexDtypeTest, GatherTakesInt32AndEmptyIndices) {
  KernelRuntimeContext ctx;
  TestTensor self(ScalarType::Float, {2, 3}, floats({0, 1, 2, 3, 4, 5}));
  TestTensor index(ScalarType::Int, {2, 2}, floats({2, 0, 1, 1}));
  TestTensor out(ScalarType::Float, {2, 2}, zeros(4));
  native::gather_out(ctx, self, 1, index, false, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), floats({2, 0, 4, 4}));

  // An empty index of any integer dtype is never read.
  TestTensor empty_index(ScalarType::Byte, {2, 0}, zeros(0));
  TestTensor empty_out(ScalarType::Float, {2, 0}, zeros(0));
  native::gather_out(ctx, self, 1, empty_index, false, empty_out);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);

  TestTensor float_index(ScalarType::Float, {2, 2}, floats({0, 0, 0, 0}));
  native::gather_out(ctx, self, 1, float_index, false, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpIndexDtypeTest, IndexPutWithBoolMask) {
  TempContext context;
  KernelRuntimeContext& ctx = context.get();
  TestTensor self(ScalarType::Float, {3, 2}, zeros(6));
  TestTensor mask(ScalarType::Bool, {3}, floats({1, 0, 1}));
  TestTensor values(ScalarType::Float, {2}, floats({1, 2}));
  TestTensor out(ScalarType::Float, {3, 2}, zeros(6));
  std::optional<Tensor> indices[] = {mask.tensor()};
  native::index_put_out(ctx,
                        self,
                        ArrayRef<std::optional<Tensor>>(indices, 1),
                        values,
                        false,
                        out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), floats({1, 2, 0, 0, 1, 2}));
}

TEST(OpIndexDtypeTest, IndexPutRejectsMaskOfWrongSize) {
  TempContext context;
  KernelRuntimeContext& ctx = context.get();
  TestTensor self(ScalarType::Float, {3, 2}, zeros(6));
  TestTensor mask(ScalarType::Bool, {2}, floats({1, 0}));
  TestTensor values(ScalarType::Float, {2}, floats({1, 2}));
  TestTensor out(ScalarType::Float, {3, 2}, zeros(6));
  std::optional<Tensor> indices[] = {mask.tensor()};
  native::index_put_out(ctx,
                        self,
                        ArrayRef<std::optional<Tensor>>(indices, 1),
                        values,
                        false,
                        out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpIndexDtypeTest, IndexPutMaskWithoutTempMemoryFails) {
  KernelRuntimeContext ctx; // no temp allocator
  TestTensor self(ScalarType::Float, {3}, zeros(3));
  TestTensor mask(ScalarType::Bool, {3}, floats({1, 0, 1}));
  TestTensor values(ScalarType::Float, {1}, floats({7}));
  TestTensor out(ScalarType::Float, {3}, zeros(3));
  std::optional<Tensor> indices[] = {mask.tensor()};
  native::index_put_out(ctx,
                        self,
                        ArrayRef<std::optional<Tensor>>(indices, 1),
                        values,
                        false,
                        out);
  EXPECT_NE(ctx.failure_state(), Error::Ok);
}

TEST(OpIndexDtypeTest, MmOnBool) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Bool, {2, 2}, floats({1, 0, 0, 1}));
  TestTensor b(ScalarType::Bool, {2, 2}, floats({1, 1, 0, 0}));
  TestTensor out(ScalarType::Bool, {2, 2}, zeros(4));
  native::mm_out(ctx, a, b, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), floats({1, 1, 0, 0}));
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

TEST(OpIndexDtypeTest, SearchsortedWithSorter) {
  KernelRuntimeContext ctx;
  TestTensor seq(ScalarType::Float, {3}, floats({3, 1, 2}));
  TestTensor sorter(ScalarType::Long, {3}, floats({1, 2, 0}));
  TestTensor values(ScalarType::Float, {3}, floats({2.5, 0, 3}));
  TestTensor out(ScalarType::Long, {3}, zeros(3));
  native::searchsorted_tensor_out(
      ctx, seq, values, false, false, std::nullopt, sorter.tensor(), out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), floats({2, 0, 2}));

  TestTensor bad_sorter(ScalarType::Long, {3}, floats({1, 3, 0}));
  native::searchsorted_tensor_out(
      ctx, seq, values, false, false, std::nullopt, bad_sorter.tensor(), out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpIndexDtypeTest, SoftmaxOfEmptyIntegerInputIsEmpty) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Long, {2, 0}, zeros(0));
  TestTensor out(ScalarType::Long, {2, 0}, zeros(0));
  native::softmax_out(ctx, x, 1, false, out);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}

TEST(OpGradientTest, AvgPool2dBackwardSpreadsEachWindow) {
  KernelRuntimeContext ctx;
  TestTensor grad(ScalarType::Float, {1, 1, 2, 2}, floats({4, 8, 12, 16}));
  TestTensor self(ScalarType::Float, {1, 1, 4, 4}, zeros(16));
  TestTensor out(ScalarType::Float, {1, 1, 4, 4}, zeros(16));
  const int64_t two[] = {2, 2}, zero[] = {0, 0};
  native::avg_pool2d_backward_grad_input(ctx,
                                         grad,
                                         self,
                                         IntArrayRef(two),
                                         IntArrayRef(two),
                                         IntArrayRef(zero),
                                         false,
                                         true,
                                         std::nullopt,
                                         out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(),
            floats({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));

  TestTensor wrong_grad(ScalarType::Float, {1, 1, 3, 3}, zeros(9));
  native::avg_pool2d_backward_grad_input(ctx,
                                         wrong_grad,
                                         self,
                                         IntArrayRef(two),
                                         IntArrayRef(two),
                                         IntArrayRef(zero),
                                         false,
                                         true,
                                         std::nullopt,
                                         out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpGradientTest, MaxPool2dBackwardRoutesToIndices) {
  KernelRuntimeContext ctx;
  TestTensor grad(ScalarType::Float, {1, 1, 2, 2}, floats({1, 2, 3, 4}));
  TestTensor self(ScalarType::Float, {1, 1, 4, 4}, zeros(16));
  TestTensor indices(ScalarType::Long, {1, 1, 2, 2}, floats({5, 5, 13, 15}));
  TestTensor out(ScalarType::Float, {1, 1, 4, 4}, zeros(16));
  const int64_t two[] = {2, 2}, zero[] = {0, 0}, one[] = {1, 1};
  native::max_pool2d_with_indices_backward_grad_input(ctx,
                                                      grad,
                                                      self,
                                                      IntArrayRef(two),
                                                      IntArrayRef(two),
                                                      IntArrayRef(zero),
                                                      IntArrayRef(one),
                                                      false,
                                                      indices,
                                                      out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  std::vector<float> expected(16, 0);
  expected[5] = 3; // two windows picked element 5
  expected[13] = 3;
  expected[15] = 4;
  EXPECT_EQ(out.values<float>(), expected);

  TestTensor bad(ScalarType::Long, {1, 1, 2, 2}, floats({5, 16, 13, 15}));
  native::max_pool2d_with_indices_backward_grad_input(ctx,
                                                      grad,
                                                      self,
                                                      IntArrayRef(two),
                                                      IntArrayRef(two),
                                                      IntArrayRef(zero),
                                                      IntArrayRef(one),
                                                      false,
                                                      bad,
                                                      out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpGradientTest, EmbeddingDenseBackwardSkipsPaddingAndScales) {
  TempContext context;
  KernelRuntimeContext& ctx = context.get();
  TestTensor grad(ScalarType::Float, {3, 2}, floats({1, 2, 3, 4, 5, 6}));
  TestTensor indices(ScalarType::Long, {3}, floats({1, 1, 0}));
  TestTensor out(ScalarType::Float, {3, 2}, zeros(6));
  native::embedding_dense_backward_out(ctx, grad, indices, 3, 0, true, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  // Row 0 is padding; row 1 gets its two rows, each divided by 2.
  EXPECT_EQ(out.values<float>(), floats({0, 0, 2, 3, 0, 0}));

  TestTensor out_of_range(ScalarType::Long, {3}, floats({1, 3, 0}));
  native::embedding_dense_backward_out(
      ctx, grad, out_of_range, 3, 0, true, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
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

TEST(OpRandomTest, RandIsInUnitIntervalAndCallsDiffer) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {1000}, zeros(1000));
  TestTensor b(ScalarType::Float, {1000}, zeros(1000));
  const int64_t size[] = {1000};
  native::rand_out(ctx, IntArrayRef(size), a);
  native::rand_out(ctx, IntArrayRef(size), b);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> va = a.values<float>();
  EXPECT_GE(*std::min_element(va.begin(), va.end()), 0.0f);
  EXPECT_LT(*std::max_element(va.begin(), va.end()), 1.0f);
  EXPECT_NE(va, b.values<float>());
}

TEST(OpRandomTest, RandpermIsAPermutation) {
  KernelRuntimeContext ctx;
  TestTensor out(ScalarType::Int, {50}, zeros(50));
  native::randperm_out(ctx, 50, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  std::vector<float> values = out.values<float>();
  std::sort(values.begin(), values.end());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(values[i], i);
  }
  // 299 does not fit int8.
  TestTensor small(ScalarType::Char, {300}, zeros(300), DYN::DYNAMIC_BOUND);
  native::randperm_out(ctx, 300, small);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpRandomTest, DropoutKeepsOrScalesAndObeysTrain) {
  KernelRuntimeContext ctx;
  std::vector<float> ones(400, 1.0f);
  TestTensor x(ScalarType::Float, {400}, ones);
  TestTensor out(ScalarType::Float, {400}, zeros(400));
  TestTensor mask(ScalarType::Bool, {400}, zeros(400));
  native::native_dropout_out(ctx, x, 0.5, true, out, mask);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> o = out.values<float>();
  const std::vector<float> m = mask.values<float>();
  int kept = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    EXPECT_EQ(o[i], m[i] != 0 ? 2.0f : 0.0f) << i;
    kept += m[i] != 0;
  }
  EXPECT_GT(kept, 100); // 200 expected; 100 is 10 standard deviations off
  EXPECT_LT(kept, 300);

  native::native_dropout_out(ctx, x, 1.0, true, out, mask);
  EXPECT_EQ(out.values<float>(), zeros(400));
  EXPECT_EQ(mask.values<float>(), zeros(400));

  native::native_dropout_out(ctx, x, 0.5, false, out, mask);
  EXPECT_EQ(out.values<float>(), ones);
  EXPECT_EQ(mask.values<float>(), ones);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);

  native::native_dropout_out(ctx, x, 1.5, true, out, mask);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
