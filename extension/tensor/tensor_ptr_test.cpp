#include <executorch/extension/tensor/tensor.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

using executorch::aten::BFloat16;
using executorch::aten::Half;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorShapeDynamism;
using executorch::runtime::Error;
using namespace executorch::extension;

namespace {

template <typename T>
std::vector<T> values_of(const TensorPtr& tensor) {
  const T* data = tensor->const_data_ptr<T>();
  return std::vector<T>(data, data + tensor->numel());
}

std::vector<int32_t> sizes_of(const TensorPtr& tensor) {
  return {tensor->sizes().begin(), tensor->sizes().end()};
}
std::vector<int32_t> strides_of(const TensorPtr& tensor) {
  return {tensor->strides().begin(), tensor->strides().end()};
}
std::vector<uint8_t> dim_order_of(const TensorPtr& tensor) {
  return {tensor->dim_order().begin(), tensor->dim_order().end()};
}

TEST(TensorPtrTest, OwnsDataFromAVectorWithContiguousLayout) {
  TensorPtr t = make_tensor_ptr({2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t->scalar_type(), ScalarType::Float);
  EXPECT_EQ(sizes_of(t), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(strides_of(t), (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(dim_order_of(t), (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(values_of<float>(t), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t->shape_dynamism(), TensorShapeDynamism::DYNAMIC_BOUND);
  // Copies of the pointer share the tensor.
  TensorPtr copy = t;
  copy->mutable_data_ptr<float>()[0] = 42;
  EXPECT_EQ(t->const_data_ptr<float>()[0], 42);
}

TEST(TensorPtrTest, DeducesDtypeAndConvertsToARequestedOne) {
  TensorPtr longs = make_tensor_ptr({3}, std::vector<int64_t>{1, -2, 3});
  EXPECT_EQ(longs->scalar_type(), ScalarType::Long);
  TensorPtr ints = make_tensor_ptr(
      {3}, std::vector<float>{1.7f, -2.2f, 3.0f}, {}, {}, ScalarType::Int);
  EXPECT_EQ(ints->scalar_type(), ScalarType::Int);
  EXPECT_EQ(values_of<int32_t>(ints), (std::vector<int32_t>{1, -2, 3}));
  TensorPtr halves = make_tensor_ptr(
      {2}, std::vector<double>{0.5, -1.25}, {}, {}, ScalarType::Half);
  EXPECT_EQ(static_cast<float>(halves->const_data_ptr<Half>()[1]), -1.25f);
  TensorPtr bools = make_tensor_ptr({3}, std::vector<bool>{true, false, true});
  EXPECT_EQ(bools->scalar_type(), ScalarType::Bool);
  EXPECT_EQ(values_of<bool>(bools), (std::vector<bool>{true, false, true}));
}

TEST(TensorPtrTest, OneDimensionalListAndScalarForms) {
  TensorPtr list = make_tensor_ptr({1.5f, 2.5f});
  EXPECT_EQ(sizes_of(list), (std::vector<int32_t>{2}));
  EXPECT_EQ(values_of<float>(list), (std::vector<float>{1.5f, 2.5f}));
  TensorPtr vec = make_tensor_ptr(std::vector<int32_t>{4, 5, 6});
  EXPECT_EQ(vec->scalar_type(), ScalarType::Int);
  EXPECT_EQ(vec->numel(), 3);
  TensorPtr scalar = make_tensor_ptr(int64_t(7));
  EXPECT_EQ(scalar->dim(), 0);
  EXPECT_EQ(scalar->numel(), 1);
  EXPECT_EQ(scalar->const_data_ptr<int64_t>()[0], 7);
}

TEST(TensorPtrTest, DimOrderAndStridesDescribeOneLayout) {
  std::vector<float> data(24);
  // Channels last: strides follow from the dim order ...
  TensorPtr from_order = make_tensor_ptr({1, 2, 3, 4}, data, {0, 2, 3, 1});
  EXPECT_EQ(strides_of(from_order), (std::vector<int32_t>{24, 1, 8, 2}));
  // ... and the dim order from the strides.
  TensorPtr from_strides =
      make_tensor_ptr({1, 2, 3, 4}, data, {}, {24, 1, 8, 2});
  EXPECT_EQ(dim_order_of(from_strides), (std::vector<uint8_t>{0, 2, 3, 1}));
  // The stride of a size-1 dimension is free.
  TensorPtr size_one =
      make_tensor_ptr({1, 3}, std::vector<float>(3), {}, {7, 1});
  EXPECT_EQ(strides_of(size_one), (std::vector<int32_t>{3, 1}));
}

TEST(TensorPtrDeathTest, RejectsInconsistentArguments) {
  EXPECT_DEATH(make_tensor_ptr({2, 3}, std::vector<float>{1, 2, 3}),
               "need 24 bytes, data has 12");
  EXPECT_DEATH(make_tensor_ptr({2, 2}, std::vector<float>(4), {0, 0}),
               "not a permutation");
  EXPECT_DEATH(make_tensor_ptr({2, 2}, std::vector<float>(4), {}, {1, 1}),
               "stride 1 at dim 0 is not that of a dense tensor");
  EXPECT_DEATH(make_tensor_ptr({2, 2}, std::vector<float>(4), {0}),
               "dim_order has 1 entries for rank 2");
  EXPECT_DEATH(make_tensor_ptr({-1}, std::vector<float>{}), "is negative");
  EXPECT_DEATH(
      make_tensor_ptr(
          {2}, std::vector<uint8_t>{1, 2, 3}, {}, {}, ScalarType::Short),
      "need 4 bytes, data has 3");
}

TEST(TensorPtrTest, FromBlobWrapsCallerMemoryAndCallsTheDeleter) {
  float data[6] = {1, 2, 3, 4, 5, 6};
  TensorPtr t = from_blob(data, {3, 2});
  EXPECT_EQ(t->const_data_ptr<float>(), data);
  EXPECT_EQ(strides_of(t), (std::vector<int32_t>{2, 1}));
  TensorPtr strided = from_blob(data, {2, 3}, {1, 2});
  EXPECT_EQ(dim_order_of(strided), (std::vector<uint8_t>{1, 0}));

  int deleted = 0;
  void* seen = nullptr;
  {
    TensorPtr owned = from_blob(data, {6}, ScalarType::Float, [&](void* p) {
      ++deleted;
      seen = p;
    });
    TensorPtr another = owned;
    owned.reset();
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(seen, data);
}

TEST(TensorPtrTest, ViewSharesDataAndKeepsTheSourceAlive) {
  TensorPtr view;
  {
    TensorPtr source =
        make_tensor_ptr({2, 3}, std::vector<int32_t>{1, 2, 3, 4, 5, 6});
    view = make_tensor_ptr(source, {3, 2});
    EXPECT_EQ(view->const_data_ptr(), source->const_data_ptr());
    EXPECT_EQ(strides_of(view), (std::vector<int32_t>{2, 1}));
  }
  EXPECT_EQ(values_of<int32_t>(view), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  TensorPtr same = make_tensor_ptr(view);
  EXPECT_EQ(sizes_of(same), (std::vector<int32_t>{3, 2}));
  EXPECT_DEATH(make_tensor_ptr(view, {4, 2}), "a view of 32 bytes");
}

TEST(TensorPtrTest, CloneCopiesDataAndLayout) {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  TensorPtr source = make_tensor_ptr({1, 3, 1, 2}, data, {0, 2, 3, 1});
  TensorPtr clone = clone_tensor_ptr(source);
  EXPECT_NE(clone->const_data_ptr(), source->const_data_ptr());
  EXPECT_EQ(sizes_of(clone), sizes_of(source));
  EXPECT_EQ(dim_order_of(clone), dim_order_of(source));
  EXPECT_EQ(values_of<float>(clone), data);
  source->mutable_data_ptr<float>()[0] = -1;
  EXPECT_EQ(clone->const_data_ptr<float>()[0], 1);
  // A plain Tensor (e.g. a method output) clones the same way.
  TensorPtr from_tensor = clone_tensor_ptr(*source);
  EXPECT_EQ(from_tensor->const_data_ptr<float>()[0], -1);
}

TEST(TensorPtrTest, ResizeStaysWithinTheCreatedCapacity) {
  TensorPtr t = zeros({4, 4});
  ASSERT_EQ(resize_tensor_ptr(t, {2, 3}), Error::Ok);
  EXPECT_EQ(sizes_of(t), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(strides_of(t), (std::vector<int32_t>{3, 1}));
  ASSERT_EQ(resize_tensor_ptr(t, {4, 4}), Error::Ok);
  EXPECT_EQ(resize_tensor_ptr(t, {5, 4}), Error::NotSupported);
  EXPECT_EQ(resize_tensor_ptr(t, {16}), Error::NotSupported);
  TensorPtr unbound =
      zeros({2}, ScalarType::Float, TensorShapeDynamism::DYNAMIC_UNBOUND);
  EXPECT_EQ(resize_tensor_ptr(unbound, {3}), Error::NotSupported);
  TensorPtr fixed =
      zeros({2, 2}, ScalarType::Float, TensorShapeDynamism::STATIC);
  EXPECT_EQ(resize_tensor_ptr(fixed, {1, 2}), Error::NotSupported);
  EXPECT_EQ(resize_tensor_ptr(fixed, {2, 2}), Error::Ok);
}

TEST(TensorPtrMakerTest, FilledFactories) {
  EXPECT_EQ(values_of<float>(zeros({2, 2})), std::vector<float>(4, 0.f));
  EXPECT_EQ(values_of<float>(empty({3})), std::vector<float>(3, 0.f));
  EXPECT_EQ(values_of<int64_t>(ones({3}, ScalarType::Long)),
            std::vector<int64_t>(3, 1));
  // Integers are exact, beyond what a double holds.
  const int64_t big = (int64_t(1) << 62) + 1;
  EXPECT_EQ(values_of<int64_t>(full({2}, big, ScalarType::Long)),
            std::vector<int64_t>(2, big));
  EXPECT_EQ(
      static_cast<float>(
          full({1}, 0.5, ScalarType::BFloat16)->const_data_ptr<BFloat16>()[0]),
      0.5f);
  EXPECT_EQ(values_of<bool>(full({2}, true, ScalarType::Bool)),
            std::vector<bool>(2, true));
  TensorPtr scalar = scalar_tensor(3.25);
  EXPECT_EQ(scalar->dim(), 0);
  EXPECT_EQ(scalar->const_data_ptr<float>()[0], 3.25f);
  EXPECT_DEATH(full({2}, 1, ScalarType::QInt8), "not a numeric type");
}

TEST(TensorPtrMakerTest, LikeFactoriesCopySizesLayoutAndDtype) {
  TensorPtr source =
      make_tensor_ptr({1, 2, 2, 3}, std::vector<int32_t>(12), {0, 2, 3, 1});
  for (const TensorPtr& t : {empty_like(source),
                             zeros_like(source),
                             ones_like(source),
                             full_like(source, 9),
                             rand_like(source, ScalarType::Float),
                             randn_like(source, ScalarType::Float),
                             randint_like(source, 0, 5)}) {
    EXPECT_EQ(sizes_of(t), sizes_of(source));
    EXPECT_EQ(dim_order_of(t), dim_order_of(source));
    EXPECT_EQ(strides_of(t), strides_of(source));
    EXPECT_NE(t->const_data_ptr(), source->const_data_ptr());
  }
  EXPECT_EQ(values_of<int32_t>(full_like(source, 9)),
            std::vector<int32_t>(12, 9));
  EXPECT_EQ(ones_like(source)->scalar_type(), ScalarType::Int);
  TensorPtr as_double = zeros_like(source, ScalarType::Double);
  EXPECT_EQ(as_double->scalar_type(), ScalarType::Double);
  EXPECT_EQ(as_double->nbytes(), 12 * sizeof(double));
}

TEST(TensorPtrMakerTest, RandomFactoriesFollowTheirDistributions) {
  const int n = 20000;
  const std::vector<float> uniform = values_of<float>(rand({n}));
  double sum = 0;
  for (float v : uniform) {
    ASSERT_GE(v, 0.f);
    ASSERT_LT(v, 1.f);
    sum += v;
  }
  // Mean 0.5, standard error 0.29 / sqrt(n) = 0.002: 0.02 is ten of them.
  EXPECT_NEAR(sum / n, 0.5, 0.02);

  const std::vector<double> normal =
      values_of<double>(randn({n}, ScalarType::Double));
  double mean = 0, square = 0;
  for (double v : normal) {
    mean += v;
    square += v * v;
  }
  mean /= n;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(std::sqrt(square / n - mean * mean), 1.0, 0.05);

  std::set<int64_t> seen;
  for (int64_t v :
       values_of<int64_t>(randint(-3, 4, {1000}, ScalarType::Long))) {
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_DEATH(randint(2, 2, {1}), "empty range");
  // Two draws differ.
  EXPECT_NE(values_of<float>(rand({8})), values_of<float>(rand({8})));
}

} // namespace
