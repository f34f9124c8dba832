// Registers what the LLM runner's programs need to run: the optimized
// kernels (with the portable ones for the rest; the portable ones alone
// when the optimized library is not built), the prim ops, the quantized
// kernels and, when built, the XNNPACK backend. Safe to call more than once;
// llama_main and the Python bindings call it before loading a model.
#pragma once

#include <executorch/runtime/core/error.h>

namespace executorch {
namespace extension {
namespace llm {

::executorch::runtime::Error register_runner_libraries();

} // namespace llm
} // namespace extension
} // namespace executorch
