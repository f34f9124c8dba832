// Prim ops through the registry: et_copy_index (how a map loop stacks its
// rows) and the tensor queries on sizes and layout.

#include <gtest/gtest.h>

#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/prim_ops/register_prim_ops.h>

using namespace torch::executor::testing;
using ::executorch::runtime::EValue;
using ::executorch::runtime::get_op_function_from_registry;
using ::executorch::runtime::Span;

namespace {

// Runs copy_to[index] = copy_from; returns the kernel's failure state.
Error copy_index(TestTensor& to, TestTensor& from, int64_t index) {
  EXPECT_EQ(::executorch::kernels::register_prim_ops(), Error::Ok);
  auto fn =
      get_op_function_from_registry("executorch_prim::et_copy_index.tensor");
  EXPECT_TRUE(fn.ok());
  EValue values[] = {EValue(to.tensor()), EValue(from.tensor()), EValue(index)};
  EValue* stack[] = {&values[0], &values[1], &values[2]};
  KernelRuntimeContext ctx;
  (*fn)(ctx, Span<EValue*>(stack));
  return ctx.failure_state();
}

// Runs the prim op `name` on (tensor, arg) and returns its result.
EValue query(const char* name, TestTensor& t, EValue arg, Error* error) {
  EXPECT_EQ(::executorch::kernels::register_prim_ops(), Error::Ok);
  auto fn = get_op_function_from_registry(name);
  EXPECT_TRUE(fn.ok()) << name;
  EValue values[] = {EValue(t.tensor()), arg, EValue()};
  EValue* stack[] = {&values[0], &values[1], &values[2]};
  KernelRuntimeContext ctx;
  (*fn)(ctx, Span<EValue*>(stack));
  *error = ctx.failure_state();
  return values[2];
}

} // namespace

TEST(PrimOpsTest, StridesOffsetAndContiguityFollowTheDimOrder) {
  // [2, 3, 4, 5] in channels-last order: strides [60, 1, 15, 3].
  TestTensor nhwc(
      ScalarType::Float, {2, 3, 4, 5}, zeros(120), DYN::STATIC, {0, 2, 3, 1});
  Error error = Error::Ok;
  EXPECT_EQ(
      query("aten::sym_stride.int", nhwc, EValue(int64_t(1)), &error).toInt(),
      1);
  EXPECT_EQ(
      query("aten::sym_stride.int", nhwc, EValue(int64_t(-1)), &error).toInt(),
      3);
  EXPECT_EQ(error, Error::Ok);
  query("aten::sym_stride.int", nhwc, EValue(int64_t(4)), &error);
  EXPECT_EQ(error, Error::InvalidArgument);

  const EValue contiguous_format(int64_t(0));
  const EValue channels_last(int64_t(2));
  EXPECT_FALSE(query("aten::sym_is_contiguous", nhwc, contiguous_format, &error)
                   .toBool());
  EXPECT_TRUE(
      query("aten::sym_is_contiguous", nhwc, channels_last, &error).toBool());
  TestTensor dense(ScalarType::Float, {2, 3}, zeros(6));
  EXPECT_TRUE(query("aten::sym_is_contiguous", dense, contiguous_format, &error)
                  .toBool());
  EXPECT_EQ(error, Error::Ok);

  auto offset = get_op_function_from_registry("aten::sym_storage_offset");
  ASSERT_TRUE(offset.ok());
  EValue values[] = {EValue(dense.tensor()), EValue()};
  EValue* stack[] = {&values[0], &values[1]};
  KernelRuntimeContext ctx;
  (*offset)(ctx, Span<EValue*>(stack));
  EXPECT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(values[1].toInt(), 0);
}

TEST(PrimOpsTest, CopyIndexGrowsADynamicResultRowByRowAndShrinksOnRerun) {
  // Planned for 3 rows of 2.
  TestTensor to(ScalarType::Float, {3, 2}, zeros(6), DYN::DYNAMIC_BOUND);
  TestTensor row0(ScalarType::Float, {2}, std::vector<float>{1, 2});
  TestTensor row1(ScalarType::Float, {2}, std::vector<float>{3, 4});
  ASSERT_EQ(copy_index(to, row0, 0), Error::Ok);
  EXPECT_EQ(to.tensor().size(0), 1);
  ASSERT_EQ(copy_index(to, row1, 1), Error::Ok);
  EXPECT_EQ(to.tensor().size(0), 2);
  EXPECT_EQ(to.values<float>(), (std::vector<float>{1, 2, 3, 4}));
  // A later loop starts over at row 0: one row again.
  ASSERT_EQ(copy_index(to, row1, 0), Error::Ok);
  EXPECT_EQ(to.tensor().size(0), 1);
  EXPECT_EQ(to.values<float>(), (std::vector<float>{3, 4}));
}

TEST(PrimOpsTest, CopyIndexPastThePlannedRowsFailsWithoutWriting) {
  TestTensor to(ScalarType::Float, {2, 2}, zeros(4), DYN::DYNAMIC_BOUND);
  TestTensor row(ScalarType::Float, {2}, std::vector<float>{5, 6});
  EXPECT_EQ(copy_index(to, row, 2), Error::InvalidArgument);
  EXPECT_EQ(to.tensor().size(0), 2);
  EXPECT_EQ(to.values<float>(), (std::vector<float>{0, 0, 0, 0}));
  // A static result keeps its rows; writing past them fails too.
  TestTensor fixed(ScalarType::Float, {2, 2}, zeros(4));
  ASSERT_EQ(copy_index(fixed, row, 1), Error::Ok);
  EXPECT_EQ(fixed.values<float>(), (std::vector<float>{0, 0, 5, 6}));
  EXPECT_EQ(copy_index(fixed, row, 2), Error::InvalidArgument);
}
