#include <limits>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

TEST(OpAddTest, BroadcastsWithAlpha) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  TestTensor b(ScalarType::Float, {3}, std::vector<float>{10, 20, 30});
  TestTensor out(ScalarType::Float, {2, 3}, zeros(6));
  native::add_out(ctx, a, b, 2.0, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{21, 42, 63, 24, 45, 66}));
}

TEST(OpAddTest, BroadcastsBothWaysAndResizesDynamicOut) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Int, {3, 1}, std::vector<int>{1, 2, 3});
  TestTensor b(ScalarType::Int, {1, 2}, std::vector<int>{10, 20});
  // Planned for six elements in another shape.
  TestTensor out(
      ScalarType::Int, {2, 3}, std::vector<int>(6, 0), DYN::DYNAMIC_BOUND);
  native::add_out(ctx, a, b, 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.sizes(), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(out.values<int>(), (std::vector<int>{11, 21, 12, 22, 13, 23}));
}

TEST(OpAddTest, PromotesIntAndFloat) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Long, {3}, std::vector<int64_t>{1, 2, 3});
  TestTensor b(ScalarType::Float, {3}, std::vector<float>{0.5, 0.5, 0.5});
  TestTensor out(ScalarType::Float, {3}, zeros(3));
  native::add_out(ctx, a, b, 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{1.5, 2.5, 3.5}));
}

TEST(OpAddTest, ZeroDimTensorDoesNotWidenSameCategory) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Half, {2}, std::vector<float>{1, 2});
  TestTensor b(ScalarType::Double, {}, std::vector<double>{0.25});
  TestTensor out(ScalarType::Half, {2}, zeros(2));
  native::add_out(ctx, a, b, 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{1.25, 2.25}));
}

TEST(OpAddTest, BoolIsLogicalOr) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Bool, {3}, std::vector<int>{1, 0, 0});
  TestTensor b(ScalarType::Bool, {3}, std::vector<int>{1, 1, 0});
  TestTensor out(ScalarType::Bool, {3}, std::vector<int>{0, 0, 0});
  native::add_out(ctx, a, b, 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<int>(), (std::vector<int>{1, 1, 0}));
}

TEST(OpAddTest, EmptyTensors) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {0, 3}, std::vector<float>{});
  TestTensor b(ScalarType::Float, {3}, std::vector<float>{1, 2, 3});
  TestTensor out(ScalarType::Float, {0, 3}, std::vector<float>{});
  native::add_out(ctx, a, b, 1, out);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}

TEST(OpAddTest, ScalarVariantPromotesIntToFloat) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Int, {2}, std::vector<int>{1, 2});
  TestTensor out(ScalarType::Float, {2}, zeros(2));
  native::add_scalar_out(ctx, a, 0.5, 2, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{2, 3}));
}

// A left shift keeps the low bits, as eager does (the expected values are
// eager's), also of negative values and of values whose result overflows:
// undefined behaviour in C++17, found by scripts/sanitize_test.sh (UBSan)
// through the shifts sample of test_kernels_against_eager.py.
TEST(OpBitwiseTest, LeftShiftKeepsTheLowBitsLikeEager) {
  KernelRuntimeContext ctx;
  TestTensor x(
      ScalarType::Long,
      {3},
      std::vector<int64_t>{-22, std::numeric_limits<int64_t>::min(), 3});
  TestTensor by(ScalarType::Long, {3}, std::vector<int64_t>{3, 1, 62});
  TestTensor out(ScalarType::Long, {3}, std::vector<int64_t>{0, 0, 0});
  native::bitwise_left_shift_tensor_out(ctx, x, by, out);
  EXPECT_EQ(out.values<int64_t>(),
            (std::vector<int64_t>{-176, 0, -4611686018427387904}));

  TestTensor x8(ScalarType::Char, {2}, std::vector<int>{-100, 100});
  TestTensor out8(ScalarType::Char, {2}, std::vector<int>{0, 0});
  native::bitwise_left_shift_tensor_scalar_out(ctx, x8, int64_t{2}, out8);
  EXPECT_EQ(out8.values<int>(), (std::vector<int>{112, -112}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}

// Integer add, sub, rsub and mul wrap around on overflow, as eager does
// (the expected values are eager's); fuzz_program found sub.Scalar_out
// overflowing int64, undefined behaviour in C++ (UBSan).
TEST(OpAddTest, IntegerOverflowWrapsAroundLikeEager) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  KernelRuntimeContext ctx;
  TestTensor big(ScalarType::Long, {2}, std::vector<int64_t>{1LL << 62, 5});
  TestTensor other(ScalarType::Long, {2}, std::vector<int64_t>{1LL << 62, 1});
  TestTensor out(ScalarType::Long, {2}, std::vector<int64_t>{0, 0});
  native::add_out(ctx, big, other, 1, out);
  EXPECT_EQ(out.values<int64_t>(), (std::vector<int64_t>{kMin, 6}));

  TestTensor x(
      ScalarType::Long, {1}, std::vector<int64_t>{7522418752591626240});
  TestTensor one(ScalarType::Long, {1}, std::vector<int64_t>{0});
  native::sub_scalar_out(ctx, x, int64_t{-7522418752591626239}, 1, one);
  EXPECT_EQ(one.values<int64_t>(),
            (std::vector<int64_t>{-3401906568526299137}));

  TestTensor quarter(ScalarType::Long, {1}, std::vector<int64_t>{1LL << 62});
  native::rsub_scalar_out(ctx, quarter, int64_t{-(1LL << 62)}, 3, one);
  EXPECT_EQ(one.values<int64_t>(), (std::vector<int64_t>{0}));

  TestTensor lhs(ScalarType::Long, {2}, std::vector<int64_t>{kMin, 3037000500});
  TestTensor rhs(ScalarType::Long, {2}, std::vector<int64_t>{-1, 3037000500});
  native::mul_out(ctx, lhs, rhs, out);
  EXPECT_EQ(out.values<int64_t>(),
            (std::vector<int64_t>{kMin, -9223372036709301616}));

  TestTensor i32(ScalarType::Int, {1}, std::vector<int>{1 << 30});
  TestTensor i32_out(ScalarType::Int, {1}, std::vector<int>{0});
  native::add_out(ctx, i32, i32, 2, i32_out);
  EXPECT_EQ(i32_out.values<int>(), (std::vector<int>{-1073741824}));

  TestTensor a16(ScalarType::Short, {2}, std::vector<int>{300, -200});
  TestTensor b16(ScalarType::Short, {2}, std::vector<int>{300, 200});
  TestTensor out16(ScalarType::Short, {2}, std::vector<int>{0, 0});
  native::mul_out(ctx, a16, b16, out16);
  EXPECT_EQ(out16.values<int>(), (std::vector<int>{24464, 25536}));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
}

TEST(OpAddTest, NonBroadcastableShapesFail) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {2, 3}, zeros(6));
  TestTensor b(ScalarType::Float, {2}, zeros(2));
  TestTensor out(ScalarType::Float, {2, 3}, zeros(6));
  native::add_out(ctx, a, b, 1, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpAddTest, FloatResultIntoIntOutFails) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {2}, zeros(2));
  TestTensor out(ScalarType::Int, {2}, std::vector<int>{0, 0});
  native::add_out(ctx, a, a, 1, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpAddTest, StaticOutOfWrongShapeFails) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {2, 3}, zeros(6));
  TestTensor out(ScalarType::Float, {3, 2}, zeros(6));
  native::add_out(ctx, a, a, 1, out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpAddTest, ChannelsLastInputs) {
  KernelRuntimeContext ctx;
  // Logical [1, 2, 1, 2] (N, C, H, W) stored as N, H, W, C.
  TestTensor a(ScalarType::Float,
               {1, 2, 1, 2},
               std::vector<float>{1, 3, 2, 4},
               DYN::STATIC,
               {0, 2, 3, 1});
  TestTensor b(ScalarType::Float, {1, 2, 1, 2}, std::vector<float>{1, 2, 3, 4});
  TestTensor out(ScalarType::Float, {1, 2, 1, 2}, zeros(4));
  native::add_out(ctx, a, b, 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{2, 4, 6, 8}));
}
