#pragma once

// A test-only kernel for the fault handler's check (test/arm): it registers
// `aten::relu.out` for contiguous float tensors of rank 1 to 4 under a
// specialised kernel key, which the registry prefers over the portable
// fallback, and executes an undefined instruction. A program with a relu
// then faults inside Method::execute, and the handler must name the
// instruction being executed. Only the arm_fault_runner image links it.

#include <executorch/runtime/core/error.h>

namespace executorch {
namespace arm {

runtime::Error register_faulting_relu();

} // namespace arm
} // namespace executorch
