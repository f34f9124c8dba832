// nonzero, bucketize and searchsorted (cpu/op_search.cpp): dynamic outs,
// strided outs, both sides and sorters.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

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
