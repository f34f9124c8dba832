#include <executorch/examples/arm/cortex_m/faulting_kernel.h>

#include <executorch/runtime/kernel/operator_registry.h>

namespace executorch {
namespace arm {

namespace {

void faulting_kernel(runtime::KernelRuntimeContext&,
                     runtime::Span<runtime::EValue*>) {
  asm volatile("udf #1");
}

// Keys of a relu.out call's tensor arguments (self, out and out again as
// the returned value), all Float (6) with the contiguous dim order.
constexpr const char* kFloatKeys[] = {
    "v1/6;0|6;0|6;0",
    "v1/6;0,1|6;0,1|6;0,1",
    "v1/6;0,1,2|6;0,1,2|6;0,1,2",
    "v1/6;0,1,2,3|6;0,1,2,3|6;0,1,2,3",
};

} // namespace

runtime::Error register_faulting_relu() {
  static const runtime::Kernel kernels[] = {
      runtime::Kernel("aten::relu.out", kFloatKeys[0], faulting_kernel),
      runtime::Kernel("aten::relu.out", kFloatKeys[1], faulting_kernel),
      runtime::Kernel("aten::relu.out", kFloatKeys[2], faulting_kernel),
      runtime::Kernel("aten::relu.out", kFloatKeys[3], faulting_kernel),
  };
  return runtime::register_kernels(
      runtime::Span<const runtime::Kernel>(kernels, 4));
}

} // namespace arm
} // namespace executorch
