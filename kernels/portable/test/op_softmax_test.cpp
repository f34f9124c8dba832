// softmax and log_softmax (cpu/op_softmax.cpp).

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

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

TEST(OpIndexDtypeTest, SoftmaxOfEmptyIntegerInputIsEmpty) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Long, {2, 0}, zeros(0));
  TestTensor out(ScalarType::Long, {2, 0}, zeros(0));
  native::softmax_out(ctx, x, 1, false, out);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}
