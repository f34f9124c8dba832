#pragma once

// Registers every portable kernel with the kernel registry. Call it once at
// start-up, before loading methods; the registration lives in a static
// library, so nothing registers itself. Calling it again returns Ok.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace kernels {

ET_NODISCARD ::executorch::runtime::Error register_portable_kernels();

} // namespace kernels
} // namespace executorch
