#include <executorch/kernels/optimized/cpu/float_ops.h>

#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

void unary_float(
    UnaryOp op, const float* in, float* out, int64_t n, float p0, float p1) {
  const SimdKernels& kernels = simd();
  ::executorch::extension::parallel_for(
      0, n, 16384, [&](int64_t begin, int64_t end) {
        kernels.unary(op, in + begin, out + begin, end - begin, p0, p1);
      });
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
