// Unary pointwise kernels (cpu/op_unary.cpp): round with decimals.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

TEST(OpRoundTest, DecimalsAndIntegers) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {3}, std::vector<float>{1.25, -2.35, 0.05});
  TestTensor out(ScalarType::Float, {3}, zeros(3));
  native::round_decimals_out(ctx, x, 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const auto v = out.values<float>();
  EXPECT_FLOAT_EQ(v[0], 1.2f);
  EXPECT_FLOAT_EQ(v[1], -2.4f);
  EXPECT_FLOAT_EQ(v[2], 0.0f);
  TestTensor i(ScalarType::Int, {2}, std::vector<int>{7, -3});
  TestTensor iout(ScalarType::Int, {2}, std::vector<int>(2));
  native::round_out(ctx, i, iout);
  EXPECT_EQ(iout.values<int>(), (std::vector<int>{7, -3}));
}
