// Kernels the exporter reaches only through decompositions or not at all
// (pads, bucketize, nonzero, round with decimals), and 16-bit floats.

#include <cmath>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

namespace {

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(i);
  }
  return v;
}

} // namespace

TEST(OpPadTest, ReflectionAndReplication1d) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {1, 3, 4}, iota(12));
  TestTensor out(ScalarType::Float, {1, 3, 7}, zeros(21));
  const int64_t reflect[] = {2, 1};
  native::reflection_pad1d_out(ctx, x, IntArrayRef(reflect), out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(),
            (std::vector<float>{2, 1, 0, 1,  2, 3, 2, 6,  5,  4, 5,
                                6, 7, 6, 10, 9, 8, 9, 10, 11, 10}));
  const int64_t replicate[] = {1, 2};
  native::replication_pad1d_out(ctx, x, IntArrayRef(replicate), out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(),
            (std::vector<float>{0, 0, 1, 2, 3, 3, 3,  4,  4,  5, 6,
                                7, 7, 7, 8, 8, 9, 10, 11, 11, 11}));
  // Reflection cannot pad by the full size of the dim.
  const int64_t too_wide[] = {4, 0};
  native::reflection_pad1d_out(ctx, x, IntArrayRef(too_wide), out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpSearchTest, BucketizeLeftAndRight) {
  KernelRuntimeContext ctx;
  TestTensor v(ScalarType::Float,
               {6},
               std::vector<float>{0.5, 2.0, -1.0, 3.0, 1.0, 1.5});
  TestTensor b(ScalarType::Float, {3}, std::vector<float>{0, 1, 2});
  TestTensor out(ScalarType::Long, {6}, std::vector<int64_t>(6));
  native::bucketize_tensor_out(ctx, v, b, false, false, out);
  EXPECT_EQ(out.values<int64_t>(), (std::vector<int64_t>{1, 2, 0, 3, 1, 2}));
  native::bucketize_tensor_out(ctx, v, b, false, true, out);
  EXPECT_EQ(out.values<int64_t>(), (std::vector<int64_t>{1, 3, 0, 3, 2, 2}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
  // out_int32 needs an int32 out.
  native::bucketize_tensor_out(ctx, v, b, true, false, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpNonzeroTest, ResizesDynamicOutAndTreatsNegativeZeroAsZero) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {2, 2}, std::vector<float>{0, 1, -0.0f, 2});
  TestTensor out(
      ScalarType::Long, {4, 2}, std::vector<int64_t>(8), DYN::DYNAMIC_BOUND);
  native::nonzero_out(ctx, x, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.sizes(), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(out.values<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1}));
}

TEST(OpNonzeroTest, WritesColumnMajorOutThroughItsStrides) {
  // torch's nonzero result is column-major; upstream's exporter keeps that
  // dim order for out.
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Int, {2, 3}, std::vector<int>{0, 4, 0, 5, 0, 6});
  TestTensor out(ScalarType::Long,
                 {6, 2},
                 std::vector<int64_t>(12),
                 DYN::DYNAMIC_BOUND,
                 {1, 0});
  native::nonzero_out(ctx, x, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.sizes(), (std::vector<int32_t>{3, 2}));
  // Rows (0, 1), (1, 0), (1, 2), stored column by column.
  EXPECT_EQ(out.values<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
}

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
