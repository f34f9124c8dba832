// Padding kernels (cpu/op_pad.cpp) on cases the exporter reaches only
// through decompositions.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;

TEST(OpPadTest, ReflectionAndReplication1d) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {1, 3, 4}, iota(12));
  TestTensor out(ScalarType::Float, {1, 3, 7}, zeros(21));
  const int64_t reflect[] = {2, 1};
  native::reflection_pad1d_out(ctx, x, IntArrayRef(reflect), out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(),
            (std::vector<float>{2, 1, 0, 1,  2, 3, 2, 6,  5,  4, 5,
                                6, 7, 6, 10, 9, 8, 9, 10, 11, 10}));
  const int64_t replicate[] = {1, 2};
  native::replication_pad1d_out(ctx, x, IntArrayRef(replicate), out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(),
            (std::vector<float>{0, 0, 1, 2, 3, 3, 3,  4,  4,  5, 6,
                                7, 7, 7, 8, 8, 9, 10, 11, 11, 11}));
  // Reflection cannot pad by the full size of the dim.
  const int64_t too_wide[] = {4, 0};
  native::reflection_pad1d_out(ctx, x, IntArrayRef(too_wide), out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
