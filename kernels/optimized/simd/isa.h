#pragma once

// Which instruction set the optimized kernels run with. The build compiles
// the SIMD code (simd_kernels.h) for every instruction set it can target:
// on x86-64 AVX-512 and AVX2 + FMA besides the portable build, which is
// always there (SSE2 on x86-64, NEON on AArch64). At first use simd()
// picks the widest one this CPU supports.

#include <executorch/kernels/optimized/simd/simd_kernels.h>

namespace executorch {
namespace kernels {
namespace optimized {

enum class Isa : uint8_t { kPortable, kAvx2, kAvx512 };

// The kernels for the chosen instruction set. Thread-safe.
const SimdKernels& simd();

// The chosen instruction set.
Isa selected_isa();
const char* isa_name(Isa isa);

// Whether `isa` was built and this CPU runs it.
bool isa_available(Isa isa);

// Tests: makes simd() return `isa`'s kernels from now on (every thread).
// Returns false, changing nothing, when it is not available.
bool select_isa_for_testing(Isa isa);

} // namespace optimized
} // namespace kernels
} // namespace executorch
