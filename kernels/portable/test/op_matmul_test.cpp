// Matrix products (cpu/op_matmul.cpp): addmm broadcasting, bool mm.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

TEST(OpMatmulTest, AddmmBroadcastsBias) {
  KernelRuntimeContext ctx;
  TestTensor bias(ScalarType::Float, {2}, std::vector<float>{1, -1});
  TestTensor a(ScalarType::Float, {1, 3}, std::vector<float>{1, 2, 3});
  TestTensor w(ScalarType::Float, {3, 2}, std::vector<float>{1, 0, 0, 1, 1, 1});
  TestTensor out(ScalarType::Float, {1, 2}, zeros(2));
  native::addmm_out(ctx, bias, a, w, 1, 2, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{9, 9}));
  TestTensor bad(ScalarType::Float, {2, 2}, zeros(4));
  native::mm_out(ctx, a, bad, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
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
