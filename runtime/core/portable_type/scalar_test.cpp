#include <executorch/runtime/core/portable_type/scalar.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

using executorch::runtime::etensor::Scalar;

namespace {

TEST(ScalarTest, ConvertsEachKind) {
  EXPECT_EQ(Scalar(true).to<int64_t>(), 1);
  EXPECT_EQ(Scalar(int64_t{-7}).to<double>(), -7.0);
  EXPECT_EQ(Scalar(2.75).to<int64_t>(), 2);
  EXPECT_EQ(Scalar(-2.75).to<int32_t>(), -2);
  EXPECT_EQ(Scalar(2.5).to<float>(), 2.5f);
}

// A double that no integer holds converts as x86 (and eager there) does,
// not with C++'s undefined behaviour: fuzz_program found a NaN alpha of
// sub.Scalar_out converted to int64 (UBSan).
TEST(ScalarTest, DoubleOutsideTheIntegerRangeConvertsLikeX86) {
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(Scalar(std::nan("")).to<int64_t>(), kMin64);
  EXPECT_EQ(Scalar(1e300).to<int64_t>(), kMin64);
  EXPECT_EQ(Scalar(-1e300).to<int64_t>(), kMin64);
  EXPECT_EQ(Scalar(3e9).to<int32_t>(), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(Scalar(3e9).to<int8_t>(), 0);
  EXPECT_EQ(Scalar(-6645090.0).to<int16_t>(), -25954);
}

} // namespace
