// Pooling (cpu/op_pool.cpp) against values computed with PyTorch eager,
// and the backward passes.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

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
