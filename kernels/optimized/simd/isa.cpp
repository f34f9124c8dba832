#include <executorch/kernels/optimized/simd/isa.h>

#include <atomic>
#include <initializer_list>

namespace executorch {
namespace kernels {
namespace optimized {

// One table per build of simd_kernels_impl.cpp (CMakeLists.txt says which).
const SimdKernels& simd_kernels_portable();
#ifdef ET_OPT_HAVE_AVX2
const SimdKernels& simd_kernels_avx2();
#endif
#ifdef ET_OPT_HAVE_AVX512
const SimdKernels& simd_kernels_avx512();
#endif

namespace {

const SimdKernels* kernels_of(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return &simd_kernels_portable();
    case Isa::kAvx2:
#ifdef ET_OPT_HAVE_AVX2
      return &simd_kernels_avx2();
#else
      return nullptr;
#endif
    case Isa::kAvx512:
#ifdef ET_OPT_HAVE_AVX512
      return &simd_kernels_avx512();
#else
      return nullptr;
#endif
  }
  return nullptr;
}

bool cpu_supports(Isa isa) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports also checks that the OS saves the registers.
  switch (isa) {
    case Isa::kPortable:
      return true;
    case Isa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f");
  }
  return false;
#else
  return isa == Isa::kPortable;
#endif
}

Isa best_isa() {
  for (Isa isa : {Isa::kAvx512, Isa::kAvx2}) {
    if (isa_available(isa)) {
      return isa;
    }
  }
  return Isa::kPortable;
}

std::atomic<Isa>& chosen() {
  static std::atomic<Isa> isa{best_isa()};
  return isa;
}

} // namespace

bool isa_available(Isa isa) {
  return kernels_of(isa) != nullptr && cpu_supports(isa);
}

const SimdKernels& simd() {
  return *kernels_of(chosen().load(std::memory_order_relaxed));
}

Isa selected_isa() {
  return chosen().load(std::memory_order_relaxed);
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return "portable";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

bool select_isa_for_testing(Isa isa) {
  if (!isa_available(isa)) {
    return false;
  }
  chosen().store(isa, std::memory_order_relaxed);
  return true;
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
