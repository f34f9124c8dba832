#include <executorch/extension/tensor/tensor_accessor.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/tensor/tensor.h>

using executorch::aten::ScalarType;
using executorch::extension::make_tensor_accessor;
using executorch::extension::make_tensor_ptr;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;

namespace {

// A distinct value per logical index.
float value_at(int n, int c, int h, int w) {
  return static_cast<float>(1000 * n + 100 * c + 10 * h + w);
}

TEST(TensorAccessor, IndexesAContiguousTensorThroughItsStrides) {
  std::vector<float> data(2 * 3 * 4);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<float>(i);
  }
  TensorPtr t = make_tensor_ptr({2, 3, 4}, data);
  auto accessor = make_tensor_accessor<float, 3>(*t);
  ASSERT_TRUE(accessor.ok());
  EXPECT_EQ(accessor->size(0), 2);
  EXPECT_EQ(accessor->size(2), 4);
  EXPECT_EQ(accessor->stride(0), 12);
  EXPECT_EQ(accessor->stride(1), 4);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ((*accessor)[i].size(0), 3);
    EXPECT_EQ((*accessor)[i].stride(0), 4);
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        ASSERT_EQ((*accessor)[i][j][k], static_cast<float>(i * 12 + j * 4 + k));
      }
    }
  }
  // Writes reach the tensor.
  (*accessor)[1][2][3] = -5.f;
  EXPECT_EQ(t->const_data_ptr<float>()[23], -5.f);
}

TEST(TensorAccessor, ReadsAChannelsLastTensorByLogicalIndex) {
  const int n = 2, c = 3, h = 4, w = 5;
  std::vector<float> nhwc(n * c * h * w);
  for (int in = 0; in < n; ++in) {
    for (int ic = 0; ic < c; ++ic) {
      for (int ih = 0; ih < h; ++ih) {
        for (int iw = 0; iw < w; ++iw) {
          nhwc[((in * h + ih) * w + iw) * c + ic] = value_at(in, ic, ih, iw);
        }
      }
    }
  }
  TensorPtr t = make_tensor_ptr({n, c, h, w}, nhwc, {0, 2, 3, 1});
  auto accessor = make_tensor_accessor<const float, 4>(*t);
  ASSERT_TRUE(accessor.ok());
  EXPECT_EQ(accessor->stride(1), 1);
  for (int in = 0; in < n; ++in) {
    for (int ic = 0; ic < c; ++ic) {
      for (int ih = 0; ih < h; ++ih) {
        for (int iw = 0; iw < w; ++iw) {
          ASSERT_EQ((*accessor)[in][ic][ih][iw], value_at(in, ic, ih, iw));
        }
      }
    }
  }
}

TEST(TensorAccessor, RefusesAnotherRankOrElementSize) {
  TensorPtr t = make_tensor_ptr({2, 3}, std::vector<float>(6));
  EXPECT_EQ((make_tensor_accessor<float, 3>(*t).error()),
            Error::InvalidArgument);
  EXPECT_EQ((make_tensor_accessor<float, 1>(*t).error()),
            Error::InvalidArgument);
  EXPECT_EQ((make_tensor_accessor<int64_t, 2>(*t).error()),
            Error::InvalidArgument);
  // Same-size types reinterpret, as upstream's do (a Half tensor's bits).
  TensorPtr half = make_tensor_ptr(
      {2}, std::vector<uint8_t>{0, 0x3c, 0, 0x40}, {}, {}, ScalarType::Half);
  auto bits = make_tensor_accessor<const uint16_t, 1>(*half);
  ASSERT_TRUE(bits.ok());
  EXPECT_EQ((*bits)[0], 0x3c00);
  EXPECT_EQ((*bits)[1], 0x4000);
}

TEST(TensorAccessorDeathTest, AnIndexOutsideItsDimensionAborts) {
  TensorPtr t = make_tensor_ptr({2, 3}, std::vector<float>(6));
  auto accessor = make_tensor_accessor<float, 2>(*t);
  ASSERT_TRUE(accessor.ok());
  EXPECT_DEATH((*accessor)[2], "index 2 outside \\[0, 2\\)");
  EXPECT_DEATH((*accessor)[0][-1], "index -1 outside \\[0, 3\\)");
  EXPECT_DEATH(accessor->size(2), "dimension 2 outside \\[0, 2\\)");
}

} // namespace
