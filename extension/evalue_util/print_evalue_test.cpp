#include <executorch/extension/evalue_util/print_evalue.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/tensor/tensor.h>

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::extension::evalue_edge_items;
using executorch::extension::make_tensor_ptr;
using executorch::extension::print_tensor_values;
using executorch::extension::TensorPtr;
using executorch::runtime::BoxedEvalueList;
using executorch::runtime::EValue;

namespace {

std::string str(const EValue& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

TEST(PrintEValueTest, Scalars) {
  EXPECT_EQ(str(EValue()), "None");
  EXPECT_EQ(str(EValue(int64_t(-3))), "-3");
  EXPECT_EQ(str(EValue(2.5)), "2.5");
  EXPECT_EQ(str(EValue(2.0)), "2.");
  EXPECT_EQ(str(EValue(true)), "True");
  const char text[] = "hello";
  EXPECT_EQ(str(EValue(text, 5)), "\"hello\"");
}

TEST(PrintEValueTest, TensorsShowSizesDtypeAndElements) {
  TensorPtr floats = make_tensor_ptr({2, 2}, std::vector<float>{1, 2.5, -3, 4});
  EXPECT_EQ(str(*floats), "tensor(sizes=[2, 2], [1., 2.5, -3., 4.])");
  TensorPtr bytes = make_tensor_ptr({3}, std::vector<uint8_t>{0, 65, 255});
  EXPECT_EQ(str(*bytes), "tensor(sizes=[3], dtype=Byte, [0, 65, 255])");
  TensorPtr bools = make_tensor_ptr({2}, std::vector<bool>{true, false});
  EXPECT_EQ(str(*bools), "tensor(sizes=[2], dtype=Bool, [True, False])");
  TensorPtr halves =
      make_tensor_ptr({1}, std::vector<float>{0.5}, {}, {}, ScalarType::Half);
  EXPECT_EQ(str(*halves), "tensor(sizes=[1], dtype=Half, [0.5])");
  TensorPtr scalar = make_tensor_ptr(int64_t(7));
  EXPECT_EQ(str(*scalar), "tensor(sizes=[], dtype=Long, [7])");
  const float parts[] = {1, 2.5, 0, -1};
  std::vector<uint8_t> bytes_of_parts(sizeof(parts));
  std::memcpy(bytes_of_parts.data(), parts, sizeof(parts));
  TensorPtr complex = make_tensor_ptr(
      {2}, std::move(bytes_of_parts), {}, {}, ScalarType::ComplexFloat);
  EXPECT_EQ(str(*complex),
            "tensor(sizes=[2], dtype=ComplexFloat, [1.+2.5j, 0.-1.j])");
  TensorPtr no_data = make_tensor_ptr({2}, nullptr);
  EXPECT_EQ(str(*no_data), "tensor(sizes=[2], <no data>)");
}

TEST(PrintEValueTest, LongTensorsAreElidedByEdgeItems) {
  std::vector<int32_t> values(20);
  for (int i = 0; i < 20; ++i) {
    values[i] = i;
  }
  TensorPtr t = make_tensor_ptr({20}, values);
  EXPECT_EQ(str(*t),
            "tensor(sizes=[20], dtype=Int, [0, 1, 2, 3, 4, 5, ..., 14, 15, 16, "
            "17, 18, 19])");
  std::ostringstream os;
  os << evalue_edge_items(2) << EValue(*t);
  EXPECT_EQ(os.str(), "tensor(sizes=[20], dtype=Int, [0, 1, ..., 18, 19])");
  // Exactly twice the edge items: nothing to elide.
  std::ostringstream four;
  four << evalue_edge_items(2)
       << EValue(*make_tensor_ptr({4}, std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(four.str(), "tensor(sizes=[4], [1., 2., 3., 4.])");
}

std::string values(const TensorPtr& tensor, size_t limit = SIZE_MAX) {
  std::ostringstream os;
  EXPECT_TRUE(print_tensor_values(os, *tensor, limit));
  return os.str();
}

TEST(PrintTensorValuesTest, ExactDigitsInLogicalOrder) {
  EXPECT_EQ(values(make_tensor_ptr({3}, std::vector<float>{0.1f, 1, -2.5})),
            "0.100000001, 1, -2.5");
  EXPECT_EQ(values(make_tensor_ptr({1}, std::vector<double>{0.1})),
            "0.10000000000000001");
  EXPECT_EQ(values(make_tensor_ptr({2}, std::vector<bool>{true, false})),
            "true, false");
  EXPECT_EQ(values(make_tensor_ptr({2}, std::vector<int8_t>{-1, 65})),
            "-1, 65");
  // Channels last: memory holds [c0 c1 c0 c1 ...]; printing follows the
  // logical (row-major) order all the same.
  TensorPtr channels_last =
      make_tensor_ptr({1, 2, 1, 2},
                      std::vector<float>{1, 3, 2, 4},
                      {0, 2, 3, 1});
  EXPECT_EQ(values(channels_last), "1, 2, 3, 4");
}

TEST(PrintTensorValuesTest, LimitsAndUnprintableDtypes) {
  TensorPtr t = make_tensor_ptr({5}, std::vector<int32_t>{1, 2, 3, 4, 5});
  EXPECT_EQ(values(t, 2), "1, 2, ... (3 more)");
  EXPECT_EQ(values(t, 5), "1, 2, 3, 4, 5");
  std::vector<uint8_t> bytes(8);
  TensorPtr complex =
      make_tensor_ptr({1}, std::move(bytes), {}, {}, ScalarType::ComplexFloat);
  std::ostringstream os;
  EXPECT_FALSE(print_tensor_values(os, *complex, SIZE_MAX));
  EXPECT_EQ(os.str(), "");
}

TEST(PrintEValueTest, Lists) {
  EValue a(int64_t(1)), b(int64_t(2));
  EValue* wrapped[] = {&a, &b};
  int64_t unwrapped[2];
  EXPECT_EQ(str(EValue(BoxedEvalueList<int64_t>(wrapped, unwrapped, 2))),
            "(len=2)[1, 2]");
  const double doubles[] = {0.5, 1};
  EXPECT_EQ(str(EValue(executorch::runtime::ArrayRef<double>(doubles, 2))),
            "(len=2)[0.5, 1.]");
  const bool bools[] = {false};
  EXPECT_EQ(str(EValue(executorch::runtime::ArrayRef<bool>(bools, 1))),
            "(len=1)[False]");
  TensorPtr t = make_tensor_ptr({1}, std::vector<float>{3});
  EValue tensor_value(*t);
  EValue* tensors[] = {&tensor_value};
  Tensor unwrapped_tensors[] = {*t};
  EXPECT_EQ(str(EValue(BoxedEvalueList<Tensor>(tensors, unwrapped_tensors, 1))),
            "(len=1)[tensor(sizes=[1], [3.])]");
}

} // namespace
