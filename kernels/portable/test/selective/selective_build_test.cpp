// A kernel library generated for a subset of the portable operators
// (gen_operators_lib with ROOT_OPS) registers exactly those operators.

#include <gtest/gtest.h>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace executorch {
namespace kernels {
namespace test {
::executorch::runtime::Error register_selected_kernels();
} // namespace test
} // namespace kernels
} // namespace executorch

TEST(SelectiveBuildTest, RegistersOnlyTheSelectedOperators) {
  ASSERT_EQ(::executorch::kernels::test::register_selected_kernels(),
            ::executorch::runtime::Error::Ok);
  EXPECT_TRUE(::executorch::runtime::registry_has_op_function("aten::add.out"));
  EXPECT_TRUE(::executorch::runtime::registry_has_op_function("aten::mm.out"));
  EXPECT_FALSE(
      ::executorch::runtime::registry_has_op_function("aten::convolution.out"));
  EXPECT_EQ(::executorch::runtime::get_registered_kernels().size(), 2u);
}
