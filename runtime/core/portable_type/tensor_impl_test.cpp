// Resizing never lets a tensor's sizes outgrow the memory behind it: the
// runtime's check that kernels rely on when they resize their outputs.

#include <executorch/runtime/core/portable_type/tensor_impl.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/testing/log_capture.h>

namespace {

using executorch::runtime::Error;
using executorch::runtime::TensorShapeDynamism;
using executorch::runtime::etensor::ScalarType;
using executorch::runtime::etensor::TensorImpl;
using executorch::runtime::testing::LogCapture;
using SizesType = TensorImpl::SizesType;

// A float tensor planned for `sizes` (its capacity) with the given dynamism.
struct PlannedTensor {
  PlannedTensor(std::vector<SizesType> planned, TensorShapeDynamism dynamism)
      : sizes(std::move(planned)),
        dim_order(sizes.size()),
        strides(sizes.size()),
        impl(ScalarType::Float,
             static_cast<ssize_t>(sizes.size()),
             sizes.data(),
             data,
             dim_order.data(),
             strides.data(),
             dynamism) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      dim_order[d] = static_cast<TensorImpl::DimOrderType>(d);
    }
  }
  Error resize(std::vector<SizesType> new_sizes) {
    return impl.internal_resize_contiguous(
        {new_sizes.data(), new_sizes.size()});
  }

  float data[6] = {};
  std::vector<SizesType> sizes;
  std::vector<TensorImpl::DimOrderType> dim_order;
  std::vector<TensorImpl::StridesType> strides;
  TensorImpl impl;
};

TEST(TensorImplResizeTest, BoundTensorShrinksAndGrowsBackToItsCapacity) {
  PlannedTensor t({2, 3}, TensorShapeDynamism::DYNAMIC_BOUND);
  ASSERT_EQ(t.resize({3, 1}), Error::Ok);
  EXPECT_EQ(t.impl.numel(), 3);
  EXPECT_EQ(t.impl.strides()[0], 1);
  ASSERT_EQ(t.resize({1, 6}), Error::Ok);
  EXPECT_EQ(t.impl.nbytes(), 6 * sizeof(float));
  ASSERT_EQ(t.resize({0, 7}), Error::Ok);
  EXPECT_EQ(t.impl.numel(), 0);
  EXPECT_EQ(t.resize({7, 1}), Error::NotSupported);
}

TEST(TensorImplResizeTest, UnboundTensorIsHeldToItsPlannedMemory) {
  // Growing an unbound tensor past its planned memory used to succeed, and
  // the kernel then wrote past the buffer.
  PlannedTensor t({2, 3}, TensorShapeDynamism::DYNAMIC_UNBOUND);
  LogCapture logs;
  EXPECT_EQ(t.resize({4, 3}), Error::NotSupported);
  EXPECT_TRUE(logs.contains({"planned capacity of 6 elements", "dim 1"}));
  EXPECT_EQ(t.impl.numel(), 6);
  EXPECT_EQ(t.resize({3, 2}), Error::Ok);
}

TEST(TensorImplResizeTest, OverflowingSizesAreRefusedNotWrapped) {
  // The product of these sizes overflows 64 bits; it is checked as it is
  // formed, so it never wraps around to something that fits.
  PlannedTensor t({1, 2, 3}, TensorShapeDynamism::DYNAMIC_UNBOUND);
  EXPECT_EQ(t.resize({INT32_MAX, INT32_MAX, INT32_MAX}), Error::NotSupported);
  EXPECT_EQ(t.resize({1, -1, 1}), Error::InvalidArgument);
  EXPECT_EQ(t.impl.numel(), 6);
}

TEST(TensorImplResizeTest, StaticTensorKeepsItsShape) {
  PlannedTensor t({2, 3}, TensorShapeDynamism::STATIC);
  EXPECT_EQ(t.resize({2, 3}), Error::Ok);
  EXPECT_EQ(t.resize({3, 2}), Error::NotSupported);
}

TEST(TensorImplResizeTest, EmptyTensorResizesToOtherEmptyShapes) {
  PlannedTensor t({0, 3}, TensorShapeDynamism::DYNAMIC_BOUND);
  EXPECT_EQ(t.resize({5, 0}), Error::Ok);
  EXPECT_EQ(t.resize({1, 1}), Error::NotSupported);
}

} // namespace
