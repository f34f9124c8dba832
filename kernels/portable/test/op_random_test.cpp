// Random kernels (cpu/op_random.cpp): ranges, permutations, dropout.

#include <algorithm>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

TEST(OpRandomTest, RandIsInUnitIntervalAndCallsDiffer) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {1000}, zeros(1000));
  TestTensor b(ScalarType::Float, {1000}, zeros(1000));
  const int64_t size[] = {1000};
  native::rand_out(ctx, IntArrayRef(size), a);
  native::rand_out(ctx, IntArrayRef(size), b);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> va = a.values<float>();
  EXPECT_GE(*std::min_element(va.begin(), va.end()), 0.0f);
  EXPECT_LT(*std::max_element(va.begin(), va.end()), 1.0f);
  EXPECT_NE(va, b.values<float>());
}

TEST(OpRandomTest, RandpermIsAPermutation) {
  KernelRuntimeContext ctx;
  TestTensor out(ScalarType::Int, {50}, zeros(50));
  native::randperm_out(ctx, 50, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  std::vector<float> values = out.values<float>();
  std::sort(values.begin(), values.end());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(values[i], i);
  }
  // 299 does not fit int8.
  TestTensor small(ScalarType::Char, {300}, zeros(300), DYN::DYNAMIC_BOUND);
  native::randperm_out(ctx, 300, small);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpRandomTest, DropoutKeepsOrScalesAndObeysTrain) {
  KernelRuntimeContext ctx;
  std::vector<float> ones(400, 1.0f);
  TestTensor x(ScalarType::Float, {400}, ones);
  TestTensor out(ScalarType::Float, {400}, zeros(400));
  TestTensor mask(ScalarType::Bool, {400}, zeros(400));
  native::native_dropout_out(ctx, x, 0.5, true, out, mask);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> o = out.values<float>();
  const std::vector<float> m = mask.values<float>();
  int kept = 0;
  for (size_t i = 0; i < o.size(); ++i) {
    EXPECT_EQ(o[i], m[i] != 0 ? 2.0f : 0.0f) << i;
    kept += m[i] != 0;
  }
  EXPECT_GT(kept, 100); // 200 expected; 100 is 10 standard deviations off
  EXPECT_LT(kept, 300);

  native::native_dropout_out(ctx, x, 1.0, true, out, mask);
  EXPECT_EQ(out.values<float>(), zeros(400));
  EXPECT_EQ(mask.values<float>(), zeros(400));

  native::native_dropout_out(ctx, x, 0.5, false, out, mask);
  EXPECT_EQ(out.values<float>(), ones);
  EXPECT_EQ(mask.values<float>(), ones);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);

  native::native_dropout_out(ctx, x, 1.5, true, out, mask);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
