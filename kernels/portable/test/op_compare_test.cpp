// Comparisons (cpu/op_compare.cpp) feeding where and unary kernels.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

TEST(OpPointwiseTest, ComparisonsWhereAndUnary) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Int, {3}, std::vector<int>{-1, 0, 2});
  TestTensor mask(ScalarType::Bool, {3}, std::vector<int>{0, 0, 0});
  native::gt_scalar_out(ctx, x, 0.5, mask);
  EXPECT_EQ(mask.values<int>(), (std::vector<int>{0, 0, 1}));
  TestTensor y(ScalarType::Float, {}, std::vector<float>{9});
  TestTensor w(ScalarType::Float, {3}, zeros(3));
  native::where_self_out(ctx, mask, x, y, w);
  EXPECT_EQ(w.values<float>(), (std::vector<float>{9, 9, 2}));
  TestTensor e(ScalarType::Float, {3}, zeros(3));
  native::exp_out(ctx, x, e);
  EXPECT_NEAR(e.values<float>()[2], 7.389056f, 1e-5);
  TestTensor r(ScalarType::Int, {3}, std::vector<int>(3));
  native::relu_out(ctx, x, r);
  EXPECT_EQ(r.values<int>(), (std::vector<int>{0, 0, 2}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
  // exp of an int tensor is floating: an int out is rejected.
  native::exp_out(ctx, x, r);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
