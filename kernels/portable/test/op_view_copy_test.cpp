// View operators as copies (cpu/op_view_copy.cpp).

#include <limits>
#include <utility>

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

// Floating values outside an integer dtype's range (and NaN) convert as
// eager does on x86 (the expected values are eager's), not as undefined
// behaviour: fuzz_program found a float permuted into an int16 tensor
// (UBSan, -6.6e6 outside the range of short).
TEST(OpViewCopyTest, ToCopyOfOutOfRangeFloatsIntoIntegersIsEagers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values{-6645090.0f,
                                  1e10f,
                                  -1e10f,
                                  nan,
                                  3e9f,
                                  70000.5f,
                                  4294967294.0f,
                                  1e19f,
                                  inf};
  const std::vector<std::pair<ScalarType, std::vector<int64_t>>> expected{
      {ScalarType::Char, {-98, 0, 0, 0, 0, 112, 0, 0, 0}},
      {ScalarType::Byte, {158, 0, 0, 0, 0, 112, 0, 0, 0}},
      {ScalarType::Short, {-25954, 0, 0, 0, 0, 4464, 0, 0, 0}},
      {ScalarType::Int,
       {-6645090,
        -2147483648LL,
        -2147483648LL,
        -2147483648LL,
        -2147483648LL,
        70000,
        -2147483648LL,
        -2147483648LL,
        -2147483648LL}},
      {ScalarType::Long,
       {-6645090,
        10000000000LL,
        -10000000000LL,
        std::numeric_limits<int64_t>::min(),
        3000000000LL,
        70000,
        4294967296LL,
        std::numeric_limits<int64_t>::min(),
        std::numeric_limits<int64_t>::min()}},
  };
  TestTensor x(ScalarType::Float, {9}, values);
  for (const auto& [dtype, want] : expected) {
    KernelRuntimeContext ctx;
    TestTensor out(dtype, {9}, std::vector<int64_t>(9));
    native::to_copy_out(ctx, x, false, std::nullopt, out);
    EXPECT_EQ(ctx.failure_state(), Error::Ok);
    EXPECT_EQ(out.values<int64_t>(), want) << static_cast<int>(dtype);
  }
}

// A bool tensor whose bytes are not 0 or 1 (a crafted constant, or planned
// memory another dtype wrote) reads every nonzero byte as true instead of
// loading an invalid bool (undefined; fuzz_program found it in mul under
// UBSan).
// A step near 2^63 takes the first element (eager's result) without
// overflowing the element count or the stride (fuzz_program, UBSan: 3 *
// 6341068275337658369 in the stride).
TEST(OpViewCopyTest, SliceWithAHugeStepTakesTheFirstElement) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Int, {2, 3}, std::vector<int>{0, 1, 2, 3, 4, 5});
  TestTensor s(ScalarType::Int, {2, 1}, std::vector<int>(2));
  native::slice_copy_tensor_out(
      ctx, x, 1, 1, std::nullopt, std::numeric_limits<int64_t>::max(), s);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(s.values<int>(), (std::vector<int>{1, 4}));
  TestTensor two(ScalarType::Int, {2, 2}, std::vector<int>(4));
  native::slice_copy_tensor_out(ctx, x, 1, 0, 3, 2, two);
  EXPECT_EQ(two.values<int>(), (std::vector<int>{0, 2, 3, 5}));
}

TEST(OpViewCopyTest, ToCopyOfBoolBytesOtherThanZeroAndOneIsTrue) {
  TestTensor x(ScalarType::Bool, {4}, std::vector<int64_t>{0, 1, 0, 0});
  uint8_t* bytes = x.tensor().mutable_data_ptr<uint8_t>();
  bytes[2] = 64;
  bytes[3] = 255;
  KernelRuntimeContext ctx;
  TestTensor out(ScalarType::Float, {4}, zeros(4));
  native::to_copy_out(ctx, x, false, std::nullopt, out);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{0, 1, 1, 1}));
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
