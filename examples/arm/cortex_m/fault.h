#pragma once

// What the fault handlers print besides the faulting PC: the index of the
// instruction the runtime is executing. The runner publishes the running
// Method here around execute; the handler reads it only after a fault.

#include <executorch/runtime/executor/method.h>

namespace executorch {
namespace arm {

// `method` is executing from now on (nullptr: nothing is).
void set_executing_method(const runtime::Method* method);

} // namespace arm
} // namespace executorch
