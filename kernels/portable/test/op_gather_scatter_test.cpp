// gather (cpu/op_gather_scatter.cpp) with int32 and empty indices.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

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
