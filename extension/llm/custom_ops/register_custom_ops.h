#pragma once

// Registers the kernels of the LLM custom operators (custom_ops.yaml:
// llama::update_cache, update_cache_with_indices, custom_sdpa,
// sdpa_with_kv_cache and fast_hadamard_transform, out variants) with the
// kernel registry. Call it once at start-up, next to the other kernel
// libraries' registration; calling it again returns Ok.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace extension {
namespace llm {

ET_NODISCARD ::executorch::runtime::Error register_custom_ops();

} // namespace llm
} // namespace extension
} // namespace executorch
