// Kernels generated from arg_meta / type_alias / dim_order_alias register
// under KernelKeys that the registry matches against the dtypes and dim
// orders of a call's tensors (its arguments, then its returned out tensor).

#include <gtest/gtest.h>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace executorch {
namespace kernels {
namespace test {
::executorch::runtime::Error register_specialized_kernels();
} // namespace test
} // namespace kernels
} // namespace executorch

namespace {

using ::executorch::aten::DimOrderType;
using ::executorch::aten::ScalarType;
using ::executorch::runtime::registry_has_op_function;
using ::executorch::runtime::Span;
using ::executorch::runtime::TensorMeta;

// self, other, out and the returned out: four tensors of one dtype.
bool has_add_for(ScalarType dtype, Span<const DimOrderType> dim_order) {
  const TensorMeta meta(dtype, dim_order);
  const TensorMeta metas[] = {meta, meta, meta, meta};
  return registry_has_op_function("aten::add.out",
                                  Span<const TensorMeta>(metas, 4));
}

TEST(SpecializedKernelsTest, RegistersOneKernelPerAliasCombination) {
  ASSERT_EQ(::executorch::kernels::test::register_specialized_kernels(),
            ::executorch::runtime::Error::Ok);
  static const DimOrderType kRowMajor[] = {0, 1};
  static const DimOrderType kColumnMajor[] = {1, 0};
  EXPECT_TRUE(has_add_for(ScalarType::Float, kRowMajor));
  EXPECT_TRUE(has_add_for(ScalarType::Double, kRowMajor));
  EXPECT_FALSE(has_add_for(ScalarType::Int, kRowMajor));
  EXPECT_FALSE(has_add_for(ScalarType::Float, kColumnMajor));
  // No fallback for add.out; mul.out has only the fallback.
  EXPECT_FALSE(registry_has_op_function("aten::add.out"));
  EXPECT_TRUE(registry_has_op_function("aten::mul.out"));
  EXPECT_EQ(::executorch::runtime::get_registered_kernels().size(), 3u);
}

} // namespace
