#include <executorch/backends/xnnpack/runtime/host_loops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// Built by executorch_simd_objects (backends/xnnpack/CMakeLists.txt) with
// the optimized kernels; ET_OPT_HAVE_<ISA> says which.
#define ET_DECLARE_HOST_LOOPS(isa)                 \
  namespace f32_dw {                               \
  void row_##isa(const RowArgs& args);             \
  }                                                \
  namespace f32_pw {                               \
  void pointwise_##isa(const PointwiseArgs& args); \
  }
#ifdef ET_OPT_HAVE_PORTABLE
ET_DECLARE_HOST_LOOPS(portable)
#endif
#ifdef ET_OPT_HAVE_AVX2
ET_DECLARE_HOST_LOOPS(avx2)
#endif
#ifdef ET_OPT_HAVE_AVX512
ET_DECLARE_HOST_LOOPS(avx512)
#endif
#undef ET_DECLARE_HOST_LOOPS

HostLoops host_loops(Isa isa) {
  HostLoops loops;
  switch (isa) {
    case Isa::kPortable:
#ifdef ET_OPT_HAVE_PORTABLE
      loops = {f32_dw::row_portable, f32_pw::pointwise_portable, 8};
#endif
      break;
    case Isa::kAvx2:
#ifdef ET_OPT_HAVE_AVX2
      loops = {f32_dw::row_avx2, f32_pw::pointwise_avx2, 16};
#endif
      break;
    case Isa::kAvx512:
#ifdef ET_OPT_HAVE_AVX512
      loops = {f32_dw::row_avx512, f32_pw::pointwise_avx512, 32};
#endif
      break;
  }
  return loops;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
