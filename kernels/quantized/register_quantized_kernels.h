#pragma once

// Registers the quantized_decomposed kernels (quantized.yaml) with the
// kernel registry. Call it once at start-up, before loading methods, next
// to register_portable_kernels(); calling it again returns Ok.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace kernels {

ET_NODISCARD ::executorch::runtime::Error register_quantized_kernels();

} // namespace kernels
} // namespace executorch
