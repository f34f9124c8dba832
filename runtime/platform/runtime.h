#pragma once

namespace executorch {
namespace runtime {

// Initializes the PAL. Call once before using the runtime; later calls do
// nothing.
void runtime_init();

} // namespace runtime
} // namespace executorch
