// Registration and the generated boxed wrappers, end to end through the
// registry.

#include <gtest/gtest.h>

#include <executorch/kernels/portable/register_portable_kernels.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/prim_ops/register_prim_ops.h>

using namespace torch::executor::testing;
using ::executorch::runtime::EValue;
using ::executorch::runtime::get_op_function_from_registry;
using ::executorch::runtime::Span;

namespace {

void register_all() {
  ASSERT_EQ(::executorch::kernels::register_portable_kernels(), Error::Ok);
  ASSERT_EQ(::executorch::kernels::register_prim_ops(), Error::Ok);
}

} // namespace

TEST(RegistrationTest, RegisteringTwiceIsHarmless) {
  register_all();
  const size_t count = ::executorch::runtime::get_registered_kernels().size();
  register_all();
  EXPECT_EQ(::executorch::runtime::get_registered_kernels().size(), count);
  EXPECT_TRUE(::executorch::runtime::registry_has_op_function("aten::add.out"));
  EXPECT_TRUE(::executorch::runtime::registry_has_op_function(
      "dim_order_ops::_to_dim_order_copy.out"));
  EXPECT_TRUE(
      ::executorch::runtime::registry_has_op_function("aten::sym_size.int"));
}

TEST(RegistrationTest, BoxedAddRunsWithReturnSlot) {
  register_all();
  auto fn = get_op_function_from_registry("aten::add.out");
  ASSERT_TRUE(fn.ok());
  TestTensor a(ScalarType::Float, {2}, std::vector<float>{1, 2});
  TestTensor out(ScalarType::Float, {2}, zeros(2));
  EValue values[] = {EValue(a.tensor()),
                     EValue(a.tensor()),
                     EValue(int64_t(3)),
                     EValue(out.tensor()),
                     EValue(out.tensor())};
  EValue* stack[] = {
      &values[0], &values[1], &values[2], &values[3], &values[4]};
  KernelRuntimeContext ctx;
  (*fn)(ctx, Span<EValue*>(stack));
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{4, 8}));
}

TEST(RegistrationTest, WrongArgumentKindFailsInsteadOfAborting) {
  register_all();
  auto fn = get_op_function_from_registry("aten::add.out");
  ASSERT_TRUE(fn.ok());
  TestTensor a(ScalarType::Float, {2}, std::vector<float>{1, 2});
  EValue values[] = {EValue(a.tensor()),
                     EValue(int64_t(1)),
                     EValue(int64_t(1)),
                     EValue(a.tensor())};
  EValue* stack[] = {&values[0], &values[1], &values[2], &values[3]};
  KernelRuntimeContext ctx;
  (*fn)(ctx, Span<EValue*>(stack));
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(RegistrationTest, WrongStackSizeFails) {
  register_all();
  auto fn = get_op_function_from_registry("aten::relu.out");
  ASSERT_TRUE(fn.ok());
  TestTensor a(ScalarType::Float, {2}, std::vector<float>{1, 2});
  EValue values[] = {EValue(a.tensor())};
  EValue* stack[] = {&values[0]};
  KernelRuntimeContext ctx;
  (*fn)(ctx, Span<EValue*>(stack));
  EXPECT_EQ(ctx.failure_state(), Error::InvalidProgram);
}

TEST(PrimOpsTest, SymSizeAndArithmetic) {
  register_all();
  TestTensor a(ScalarType::Float, {2, 5}, zeros(10));
  EValue t(a.tensor());
  EValue dim(int64_t(-1));
  EValue size;
  EValue* size_stack[] = {&t, &dim, &size};
  KernelRuntimeContext ctx;
  (*get_op_function_from_registry("aten::sym_size.int"))(
      ctx, Span<EValue*>(size_stack));
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(size.toInt(), 5);

  EValue seven(int64_t(-7));
  EValue two(int64_t(2));
  EValue result;
  EValue* div_stack[] = {&seven, &two, &result};
  (*get_op_function_from_registry("executorch_prim::floordiv.Scalar"))(
      ctx, Span<EValue*>(div_stack));
  EXPECT_EQ(result.toInt(), -4); // Python floors toward negative infinity
  (*get_op_function_from_registry("executorch_prim::mod.Scalar"))(
      ctx, Span<EValue*>(div_stack));
  EXPECT_EQ(result.toInt(), 1);
  (*get_op_function_from_registry("executorch_prim::truediv.Scalar"))(
      ctx, Span<EValue*>(div_stack));
  EXPECT_DOUBLE_EQ(result.toDouble(), -3.5);
  EXPECT_EQ(ctx.failure_state(), Error::Ok);

  EValue zero(int64_t(0));
  EValue* zero_stack[] = {&seven, &zero, &result};
  (*get_op_function_from_registry("executorch_prim::floordiv.Scalar"))(
      ctx, Span<EValue*>(zero_stack));
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
