// embedding_dense_backward (cpu/op_embedding.cpp).

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

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
