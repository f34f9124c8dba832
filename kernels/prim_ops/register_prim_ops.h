#pragma once

// Registers the primitive operators the exporter emits for symbolic shapes
// and control flow (aten::sym_size.int, executorch_prim::add.Scalar, ...).
// Call once at start-up; calling again returns Ok.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace kernels {

ET_NODISCARD ::executorch::runtime::Error register_prim_ops();

} // namespace kernels
} // namespace executorch
