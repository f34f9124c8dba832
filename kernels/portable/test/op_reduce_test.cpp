// Reductions (cpu/op_reduce.cpp): dims, keepdim and empty inputs.

#include <limits>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

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

// Integer sums and products wrap around on overflow, as eager does (the
// expected values are eager's); fuzz_program found sum.IntList_out
// overflowing int64, undefined behaviour in C++ (UBSan).
TEST(OpReduceTest, IntegerOverflowWrapsAroundLikeEager) {
  KernelRuntimeContext ctx;
  const std::vector<int64_t> values{
      9151314444947554308, 4575657222473777152, 7};
  TestTensor x(ScalarType::Long, {3}, values);
  TestTensor sum(ScalarType::Long, {}, std::vector<int64_t>{0});
  native::sum_dim_out(ctx, x, std::nullopt, false, std::nullopt, sum);
  EXPECT_EQ(sum.values<int64_t>(),
            (std::vector<int64_t>{-4719772406288220149}));

  TestTensor running(ScalarType::Long, {3}, std::vector<int64_t>{0, 0, 0});
  native::cumsum_out(ctx, x, 0, std::nullopt, running);
  EXPECT_EQ(
      running.values<int64_t>(),
      (std::vector<int64_t>{
          9151314444947554308, -4719772406288220156, -4719772406288220149}));

  TestTensor y(ScalarType::Long,
               {2, 2},
               std::vector<int64_t>{1LL << 62, 1LL << 62, 1, 2});
  TestTensor products(ScalarType::Long, {2}, std::vector<int64_t>{0, 0});
  native::prod_int_out(ctx, y, 0, false, std::nullopt, products);
  EXPECT_EQ(
      products.values<int64_t>(),
      (std::vector<int64_t>{1LL << 62, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
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
