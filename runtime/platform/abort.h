#pragma once

#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace runtime {

// Aborts through the PAL; never returns.
ET_NORETURN void runtime_abort();

} // namespace runtime
} // namespace executorch
