// index_put (cpu/op_index.cpp) with boolean masks.

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/portable/test/test_values.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::ArrayRef;

TEST(OpIndexDtypeTest, IndexPutWithBoolMask) {
  TempContext context;
  KernelRuntimeContext& ctx = context.get();
  TestTensor self(ScalarType::Float, {3, 2}, zeros(6));
  TestTensor mask(ScalarType::Bool, {3}, floats({1, 0, 1}));
  TestTensor values(ScalarType::Float, {2}, floats({1, 2}));
  TestTensor out(ScalarType::Float, {3, 2}, zeros(6));
  std::optional<Tensor> indices[] = {mask.tensor()};
  native::index_put_out(ctx,
                        self,
                        ArrayRef<std::optional<Tensor>>(indices, 1),
                        values,
                        false,
                        out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<float>(), floats({1, 2, 0, 0, 1, 2}));
}

TEST(OpIndexDtypeTest, IndexPutRejectsMaskOfWrongSize) {
  TempContext context;
  KernelRuntimeContext& ctx = context.get();
  TestTensor self(ScalarType::Float, {3, 2}, zeros(6));
  TestTensor mask(ScalarType::Bool, {2}, floats({1, 0}));
  TestTensor values(ScalarType::Float, {2}, floats({1, 2}));
  TestTensor out(ScalarType::Float, {3, 2}, zeros(6));
  std::optional<Tensor> indices[] = {mask.tensor()};
  native::index_put_out(ctx,
                        self,
                        ArrayRef<std::optional<Tensor>>(indices, 1),
                        values,
                        false,
                        out);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}

TEST(OpIndexDtypeTest, IndexPutMaskWithoutTempMemoryFails) {
  KernelRuntimeContext ctx; // no temp allocator
  TestTensor self(ScalarType::Float, {3}, zeros(3));
  TestTensor mask(ScalarType::Bool, {3}, floats({1, 0, 1}));
  TestTensor values(ScalarType::Float, {1}, floats({7}));
  TestTensor out(ScalarType::Float, {3}, zeros(3));
  std::optional<Tensor> indices[] = {mask.tensor()};
  native::index_put_out(ctx,
                        self,
                        ArrayRef<std::optional<Tensor>>(indices, 1),
                        values,
                        false,
                        out);
  EXPECT_NE(ctx.failure_state(), Error::Ok);
}
