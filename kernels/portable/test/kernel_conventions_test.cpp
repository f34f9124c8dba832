// Rules every kernel keeps, checked across families: 16-bit floats compute
// in float, 0-dim tensors work, an unsupported dtype fails the context
// instead of crashing.

#include <cmath>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

TEST(OpHalfTest, HalfAndBFloat16ComputeInFloat) {
  KernelRuntimeContext ctx;
  TestTensor h(ScalarType::Half, {3}, std::vector<float>{1.5, -2, 65504});
  TestTensor b(ScalarType::BFloat16, {3}, std::vector<float>{0.5, 0.5, 0.5});
  // Half with BFloat16 promotes to Float.
  TestTensor out(ScalarType::Float, {3}, zeros(3));
  native::mul_out(ctx, h, b, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{0.75, -1, 32752}));
  // Overflow in half saturates to infinity, as in PyTorch.
  TestTensor hout(ScalarType::Half, {3}, zeros(3));
  native::add_out(ctx, h, h, 1, hout);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_TRUE(std::isinf(hout.values<float>()[2]));
  TestTensor s(ScalarType::Half, {3}, zeros(3));
  native::softmax_out(ctx, h, 0, false, s);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_NEAR(s.values<float>()[2], 1.0f, 1e-3);
}

TEST(OpZeroDimTest, ReductionsAndViewsOfScalars) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {}, std::vector<float>{4});
  TestTensor s(ScalarType::Float, {}, zeros(1));
  const int64_t dims[] = {0};
  native::sum_dim_out(ctx, x, IntArrayRef(dims), false, std::nullopt, s);
  EXPECT_EQ(s.values<float>(), (std::vector<float>{4}));
  TestTensor u(ScalarType::Float, {1}, zeros(1));
  native::unsqueeze_copy_out(ctx, x, -1, u);
  EXPECT_EQ(u.values<float>(), (std::vector<float>{4}));
  TestTensor sm(ScalarType::Float, {}, zeros(1));
  native::softmax_out(ctx, x, 0, false, sm);
  EXPECT_EQ(sm.values<float>(), (std::vector<float>{1}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}

TEST(OpDtypeTest, UnsupportedDtypeFailsWithoutCrashing) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {2}, zeros(2));
  TestTensor q(ScalarType::QInt8, {2}, std::vector<int8_t>{0, 0});
  native::add_out(ctx, x, x, 1, q);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  KernelRuntimeContext ctx2;
  TestTensor c(ScalarType::Float, {2}, zeros(2));
  native::clone_out(ctx2, q, std::nullopt, c);
  EXPECT_EQ(ctx2.failure_state(), Error::InvalidArgument);
}
