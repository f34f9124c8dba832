// Views as copies, cat/split and reductions: shapes, 0-dim and empty
// tensors, and bad dims.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::ArrayRef;
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

TEST(OpCatSplitTest, CatThenSplitRoundTrips) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {2, 1}, std::vector<float>{1, 2});
  TestTensor b(ScalarType::Float, {2, 2}, std::vector<float>{3, 4, 5, 6});
  TestTensor empty(ScalarType::Float, {0}, std::vector<float>{});
  TestTensor out(ScalarType::Float, {2, 3}, zeros(6));
  Tensor inputs[] = {a.tensor(), empty.tensor(), b.tensor()};
  native::cat_out(ctx, ArrayRef<Tensor>(inputs), 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{1, 3, 4, 2, 5, 6}));

  TestTensor p0(ScalarType::Float, {2, 1}, zeros(2));
  TestTensor p1(ScalarType::Float, {2, 2}, zeros(4));
  Tensor parts[] = {p0.tensor(), p1.tensor()};
  const int64_t sizes[] = {1, 2};
  native::split_with_sizes_copy_out(
      ctx, out, IntArrayRef(sizes), -1, ArrayRef<Tensor>(parts));
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(p0.values<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(p1.values<float>(), (std::vector<float>{3, 4, 5, 6}));

  const int64_t bad[] = {1, 1};
  native::split_with_sizes_copy_out(
      ctx, out, IntArrayRef(bad), 1, ArrayRef<Tensor>(parts));
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpReduceTest, SumMeanAmaxOverDims) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float,
               {2, 3, 2},
               std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  TestTensor s(ScalarType::Float, {1, 3, 1}, zeros(3));
  const int64_t dims[] = {0, -1};
  native::sum_dim_out(ctx, x, IntArrayRef(dims), true, std::nullopt, s);
  EXPECT_EQ(s.values<float>(), (std::vector<float>{14, 22, 30}));
  TestTensor m(ScalarType::Float, {2}, zeros(2));
  const int64_t dims12[] = {1, 2};
  native::mean_dim_out(ctx, x, IntArrayRef(dims12), false, std::nullopt, m);
  EXPECT_EQ(m.values<float>(), (std::vector<float>{2.5, 8.5}));
  TestTensor all(ScalarType::Float, {}, zeros(1));
  native::amax_out(ctx, x, IntArrayRef(), false, all);
  EXPECT_EQ(all.values<float>(), (std::vector<float>{11}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);

  // Integers sum into int64.
  TestTensor xi(ScalarType::Int, {3}, std::vector<int>{1, 2, 3});
  TestTensor si(ScalarType::Long, {}, std::vector<int64_t>{0});
  native::sum_dim_out(ctx, xi, std::nullopt, false, std::nullopt, si);
  EXPECT_EQ(si.values<int64_t>(), (std::vector<int64_t>{6}));

  const int64_t bad[] = {3};
  native::sum_dim_out(ctx, x, IntArrayRef(bad), false, std::nullopt, s);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpReduceTest, EmptyInputSumsToZero) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {0, 2}, std::vector<float>{});
  TestTensor s(ScalarType::Float, {2}, std::vector<float>{7, 7});
  const int64_t dims[] = {0};
  native::sum_dim_out(ctx, x, IntArrayRef(dims), false, std::nullopt, s);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(s.values<float>(), (std::vector<float>{0, 0}));
}

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
