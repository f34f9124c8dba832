#pragma once

// Scratch memory for the optimized kernels (GEMM packing panels, softmax
// lanes): one buffer per thread that grows to the largest request seen and
// is then reused, so a program's steady state allocates nothing. A Method's
// temp allocator would serve too, but the runners back it with malloc per
// call, which is what this avoids.

#include <cstddef>

namespace executorch {
namespace kernels {
namespace optimized {

// At least `bytes` bytes, 64-byte aligned, valid until the next call on this
// thread; null when memory is exhausted.
void* thread_scratch(size_t bytes);

} // namespace optimized
} // namespace kernels
} // namespace executorch
