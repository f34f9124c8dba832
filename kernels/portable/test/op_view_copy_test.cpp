// View operators as copies (cpu/op_view_copy.cpp).

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

TEST(OpViewCopyTest, PermuteSliceSelectExpand) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Int, {2, 3}, std::vector<int>{0, 1, 2, 3, 4, 5});
  TestTensor t(ScalarType::Int, {3, 2}, std::vector<int>(6));
  const int64_t dims[] = {1, 0};
  native::permute_copy_out(ctx, x, IntArrayRef(dims), t);
  EXPECT_EQ(t.values<int>(), (std::vector<int>{0, 3, 1, 4, 2, 5}));

  TestTensor s(ScalarType::Int, {2, 2}, std::vector<int>(4));
  native::slice_copy_tensor_out(ctx, x, 1, -2, std::nullopt, 1, s);
  EXPECT_EQ(s.values<int>(), (std::vector<int>{1, 2, 4, 5}));

  TestTensor row(ScalarType::Int, {3}, std::vector<int>(3));
  native::select_copy_int_out(ctx, x, 0, -1, row);
  EXPECT_EQ(row.values<int>(), (std::vector<int>{3, 4, 5}));

  TestTensor e(ScalarType::Int, {2, 2, 3}, std::vector<int>(12));
  const int64_t size[] = {2, -1, -1};
  native::expand_copy_out(ctx, x, IntArrayRef(size), false, e);
  EXPECT_EQ(e.values<int>(),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);

  native::select_copy_int_out(ctx, x, 0, 2, row);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpViewCopyTest, ViewInfersSizeAndToCopyConverts) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {2, 3}, std::vector<float>{0, 1, 2, 3, 4, 5});
  TestTensor v(ScalarType::Float, {3, 2}, zeros(6));
  const int64_t size[] = {-1, 2};
  native::view_copy_out(ctx, x, IntArrayRef(size), v);
  EXPECT_EQ(v.values<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  TestTensor h(ScalarType::Half, {2, 3}, zeros(6));
  native::to_copy_out(ctx, x, false, std::nullopt, h);
  EXPECT_EQ(h.values<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // To channels-last: same logical values, different memory order.
  TestTensor c(
      ScalarType::Float, {1, 2, 1, 3}, zeros(6), DYN::STATIC, {0, 2, 3, 1});
  TestTensor x4(
      ScalarType::Float, {1, 2, 1, 3}, std::vector<float>{0, 1, 2, 3, 4, 5});
  const int64_t order[] = {0, 2, 3, 1};
  native::_to_dim_order_copy_out(ctx, x4, false, IntArrayRef(order), c);
  EXPECT_EQ(c.values<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}
