// embedding_byte / embedding_4bit / embedding_2bit against a scalar
// reference: rows gathered by index, unpacked and dequantized per group.

#include <limits>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

namespace {

// 3 rows of 8 values in [-8, 7], in two groups of 4 per row.
const std::vector<int32_t> kValues{-8, -7, 0,  7,  1,  2, 3,  4, //
                                   5,  -1, -2, -3, 6,  7, -8, 0, //
                                   0,  0,  1,  1,  -4, 4, -5, 5};
const std::vector<float> kScales{0.5f, 0.25f, 1.f, 2.f, 0.125f, 3.f};
const std::vector<float> kZeroPoints{0.f, 1.f, -1.f, 0.5f, 0.f, 2.f};
const std::vector<int64_t> kIndices{2, 0, 2};

std::vector<float> reference(bool with_zero_points) {
  std::vector<float> out;
  for (int64_t row : kIndices) {
    for (int j = 0; j < 8; ++j) {
      const int p = row * 2 + j / 4;
      const float zp = with_zero_points ? kZeroPoints[p] : 0.f;
      out.push_back((static_cast<float>(kValues[row * 8 + j]) - zp) *
                    kScales[p]);
    }
  }
  return out;
}

// Packs kValues as upstream does for `bits`.
std::vector<uint8_t> pack(int bits) {
  std::vector<uint8_t> packed;
  if (bits == 8) {
    for (int32_t v : kValues) {
      packed.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
    }
  } else if (bits == 4) {
    for (size_t i = 0; i < kValues.size(); i += 2) {
      packed.push_back(
          static_cast<uint8_t>(((kValues[i] + 8) << 4) | (kValues[i + 1] + 8)));
    }
  }
  return packed;
}

} // namespace

TEST(EmbeddingQuantizedTest, ByteAndFourBitMatchTheReference) {
  for (int bits : {8, 4}) {
    for (bool with_zp : {false, true}) {
      KernelRuntimeContext ctx;
      const std::vector<uint8_t> packed = pack(bits);
      const int32_t cols = bits == 8 ? 8 : 4;
      TestTensor w(ScalarType::Byte, {3, cols}, packed);
      TestTensor s(ScalarType::Float, {3, 2}, kScales);
      TestTensor z(ScalarType::Float, {3, 2}, kZeroPoints);
      TestTensor idx(ScalarType::Long, {3}, kIndices);
      TestTensor out(ScalarType::Float, {3, 8}, zeros(24));
      const std::optional<Tensor> zps =
          with_zp ? std::optional<Tensor>(z.tensor()) : std::nullopt;
      if (bits == 8) {
        // Byte weights hold int8 values: read them through an int8 tensor.
        TestTensor w8(ScalarType::Char, {3, 8}, kValues);
        native::quantized_embedding_byte_out(
            ctx, w8, s, zps, -128, 127, idx, out);
      } else {
        native::quantized_embedding_4bit_out(ctx, w, s, zps, -8, 7, idx, out);
      }
      ASSERT_EQ(ctx.failure_state(), Error::Ok) << bits;
      EXPECT_EQ(out.values<float>(), reference(with_zp)) << bits << with_zp;
    }
  }
}

TEST(EmbeddingQuantizedTest, TwoBitValuesFromTheLowBitsUp) {
  KernelRuntimeContext ctx;
  // One row of 8 values in [-2, 1]: bytes hold 4 each, first in bits 0-1.
  const std::vector<int32_t> values{-2, -1, 0, 1, 1, 0, -1, -2};
  std::vector<uint8_t> packed(2, 0);
  for (size_t j = 0; j < values.size(); ++j) {
    packed[j / 4] |= static_cast<uint8_t>((values[j] + 2) << ((j % 4) * 2));
  }
  TestTensor w(ScalarType::Byte, {1, 2}, packed);
  TestTensor s(ScalarType::Float, {1}, std::vector<float>{0.5f});
  TestTensor idx(ScalarType::Int, {1, 1}, std::vector<int32_t>{0});
  TestTensor out(ScalarType::Float, {1, 1, 8}, zeros(8));
  native::quantized_embedding_2bit_dtype_out(
      ctx, w, s, std::nullopt, -2, 1, idx, ScalarType::Float, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  std::vector<float> expected;
  for (int32_t v : values) {
    expected.push_back(static_cast<float>(v) * 0.5f);
  }
  EXPECT_EQ(out.values<float>(), expected);
  EXPECT_EQ(out.sizes(), (std::vector<int32_t>{1, 1, 8}));
}

TEST(EmbeddingQuantizedTest, BadIndexAndScalesFail) {
  TestTensor w(ScalarType::Char, {3, 8}, kValues);
  TestTensor s(ScalarType::Float, {3, 2}, kScales);
  TestTensor out(ScalarType::Float, {1, 8}, zeros(8));
  {
    KernelRuntimeContext ctx;
    TestTensor idx(ScalarType::Long, {1}, std::vector<int64_t>{3});
    native::quantized_embedding_byte_out(
        ctx, w, s, std::nullopt, -128, 127, idx, out);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
  {
    KernelRuntimeContext ctx; // 3 groups do not divide 8 values
    TestTensor s3(ScalarType::Float, {3, 3}, std::vector<float>(9, 1.f));
    TestTensor idx(ScalarType::Long, {1}, std::vector<int64_t>{0});
    native::quantized_embedding_byte_out(
        ctx, w, s3, std::nullopt, -128, 127, idx, out);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
  {
    KernelRuntimeContext ctx; // a NaN scale
    std::vector<float> scales = kScales;
    scales[3] = std::numeric_limits<float>::quiet_NaN();
    TestTensor sn(ScalarType::Float, {3, 2}, scales);
    TestTensor idx(ScalarType::Long, {1}, std::vector<int64_t>{0});
    native::quantized_embedding_byte_out(
        ctx, w, sn, std::nullopt, -128, 127, idx, out);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
}

// No indices (shape [0] or [2, 0]) give an empty result of the indices'
// shape plus the row width, for each bit width; nothing is read or written.
TEST(EmbeddingQuantizedTest, EmptyIndicesGiveEmptyResults) {
  const std::vector<std::vector<int32_t>> index_shapes{{0}, {2, 0}};
  for (const std::vector<int32_t>& shape : index_shapes) {
    std::vector<int32_t> out_shape = shape;
    out_shape.push_back(8);
    for (int bits : {8, 4, 2}) {
      KernelRuntimeContext ctx;
      // 8 values of `bits` bits per row, in bytes.
      const int32_t cols = 8 * bits / 8;
      TestTensor w8(ScalarType::Char, {3, 8}, kValues);
      TestTensor w(
          ScalarType::Byte, {3, cols}, std::vector<uint8_t>(3 * cols, 0));
      TestTensor s(ScalarType::Float, {3, 2}, kScales);
      TestTensor idx(ScalarType::Long, shape, std::vector<int64_t>{});
      TestTensor out(ScalarType::Float, out_shape, zeros(0));
      if (bits == 8) {
        native::quantized_embedding_byte_out(
            ctx, w8, s, std::nullopt, -128, 127, idx, out);
      } else if (bits == 4) {
        native::quantized_embedding_4bit_out(
            ctx, w, s, std::nullopt, -8, 7, idx, out);
      } else {
        native::quantized_embedding_2bit_dtype_out(
            ctx, w, s, std::nullopt, -2, 1, idx, ScalarType::Float, out);
      }
      EXPECT_EQ(ctx.failure_state(), Error::Ok) << bits << " bits";
      EXPECT_EQ(out.sizes(), out_shape) << bits << " bits";
    }
  }
}
