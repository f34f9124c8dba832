// cat and split (cpu/op_cat_split.cpp).

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::ArrayRef;
using ::executorch::aten::IntArrayRef;

TEST(OpCatSplitTest, CatThenSplitRoundTrips) {
  KernelRuntimeContext ctx;
  TestTensor a(ScalarType::Float, {2, 1}, std::vector<float>{1, 2});
  TestTensor b(ScalarType::Float, {2, 2}, std::vector<float>{3, 4, 5, 6});
  TestTensor empty(ScalarType::Float, {0}, std::vector<float>{});
  TestTensor out(ScalarType::Float, {2, 3}, zeros(6));
  Tensor inputs[] = {a.tensor(), empty.tensor(), b.tensor()};
  native::cat_out(ctx, ArrayRef<Tensor>(inputs), 1, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), (std::vector<float>{1, 3, 4, 2, 5, 6}));

  TestTensor p0(ScalarType::Float, {2, 1}, zeros(2));
  TestTensor p1(ScalarType::Float, {2, 2}, zeros(4));
  Tensor parts[] = {p0.tensor(), p1.tensor()};
  const int64_t sizes[] = {1, 2};
  native::split_with_sizes_copy_out(
      ctx, out, IntArrayRef(sizes), -1, ArrayRef<Tensor>(parts));
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(p0.values<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(p1.values<float>(), (std::vector<float>{3, 4, 5, 6}));

  const int64_t bad[] = {1, 1};
  native::split_with_sizes_copy_out(
      ctx, out, IntArrayRef(bad), 1, ArrayRef<Tensor>(parts));
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
