#pragma once

// Registers the optimized kernels (optimized.yaml) and the portable kernels
// for every other operator with the kernel registry: what
// optimized_native_cpu_ops_lib links. Call it once at start-up, before
// loading methods, instead of register_portable_kernels() (the registry
// takes one kernel per operator and dtype). Calling it again returns Ok.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace kernels {

ET_NODISCARD ::executorch::runtime::Error register_optimized_kernels();

} // namespace kernels
} // namespace executorch
