// Strides from sizes and a dim order: the permutation and overflow checks that
// keep a hostile program's tensor metadata from reaching kernels.

#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>

#include <cstdint>

#include <gtest/gtest.h>

using executorch::runtime::dim_order_to_stride;
using executorch::runtime::Error;

TEST(DimOrderToStride, ContiguousAndChannelsLast) {
  const int32_t sizes[] = {2, 3, 4, 5};
  int32_t strides[4] = {};

  const uint8_t contiguous[] = {0, 1, 2, 3};
  ASSERT_EQ(dim_order_to_stride(sizes, contiguous, 4, strides), Error::Ok);
  EXPECT_EQ(strides[0], 60);
  EXPECT_EQ(strides[1], 20);
  EXPECT_EQ(strides[2], 5);
  EXPECT_EQ(strides[3], 1);

  const uint8_t channels_last[] = {0, 2, 3, 1};
  ASSERT_EQ(dim_order_to_stride(sizes, channels_last, 4, strides), Error::Ok);
  EXPECT_EQ(strides[0], 60);
  EXPECT_EQ(strides[1], 1);
  EXPECT_EQ(strides[2], 15);
  EXPECT_EQ(strides[3], 3);
}

TEST(DimOrderToStride, ZeroSizedDimStridesAsSizeOne) {
  const int32_t sizes[] = {3, 0, 4};
  const uint8_t order[] = {0, 1, 2};
  int32_t strides[3] = {};
  ASSERT_EQ(dim_order_to_stride(sizes, order, 3, strides), Error::Ok);
  EXPECT_EQ(strides[0], 4);
  EXPECT_EQ(strides[1], 4);
  EXPECT_EQ(strides[2], 1);
}

TEST(DimOrderToStride, RejectsANonPermutation) {
  const int32_t sizes[] = {2, 3};
  const uint8_t repeated[] = {1, 1};
  const uint8_t out_of_range[] = {0, 2};
  int32_t strides[2] = {};
  EXPECT_EQ(dim_order_to_stride(sizes, repeated, 2, strides),
            Error::InvalidArgument);
  EXPECT_EQ(dim_order_to_stride(sizes, out_of_range, 2, strides),
            Error::InvalidArgument);
}

// Found by fuzz_program: inner sizes whose product overflows int32 strides.
TEST(DimOrderToStride, RejectsStridesThatOverflow) {
  const int32_t sizes[] = {2, 3, 1610612739};
  const uint8_t order[] = {0, 1, 2};
  int32_t strides[3] = {};
  EXPECT_EQ(dim_order_to_stride(sizes, order, 3, strides),
            Error::InvalidArgument);
}

// Only inner dimensions make strides: a huge outermost size is fine here
// (whether the data fits is the caller's nbytes check).
TEST(DimOrderToStride, OutermostSizeDoesNotOverflow) {
  const int32_t sizes[] = {2147483647, 1};
  const uint8_t order[] = {0, 1};
  int32_t strides[2] = {};
  ASSERT_EQ(dim_order_to_stride(sizes, order, 2, strides), Error::Ok);
  EXPECT_EQ(strides[0], 1);
  EXPECT_EQ(strides[1], 1);
}
