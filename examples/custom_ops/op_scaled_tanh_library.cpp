// my_ops::scaled_tanh.out registered with EXECUTORCH_LIBRARY, upstream's
// codegen-free way: the kernel function of op_scaled_tanh.cpp, registered
// while the program starts (custom_ops_library_runner compiles this file
// in, and never calls custom_ops.yaml's generated register_custom_ops).

#include <executorch/extension/kernel_util/make_boxed_from_unboxed_functor.h>

namespace custom {
namespace native {
// Defined in op_scaled_tanh.cpp (declared there by the generated
// NativeFunctions.h).
::executorch::aten::Tensor& scaled_tanh_out(
    ::executorch::runtime::KernelRuntimeContext& context,
    const ::executorch::aten::Tensor& input,
    double scale,
    ::executorch::aten::Tensor& out);
} // namespace native
} // namespace custom

EXECUTORCH_LIBRARY(my_ops, "scaled_tanh.out", custom::native::scaled_tanh_out);
