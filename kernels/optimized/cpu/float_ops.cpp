#include <executorch/kernels/optimized/cpu/float_ops.h>

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

int64_t unary_grain(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kTanh:
    case UnaryOp::kSigmoid:
    case UnaryOp::kGeluErf:
    case UnaryOp::kGeluTanh:
    case UnaryOp::kSilu:
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
    case UnaryOp::kReciprocal:
      return kMathGrain;
    case UnaryOp::kRelu:
    case UnaryOp::kClamp:
    case UnaryOp::kAffine:
    case UnaryOp::kHardswish:
    case UnaryOp::kNeg:
    case UnaryOp::kAbs:
      return kCheapGrain;
  }
  return kMathGrain;
}

void unary_float(
    UnaryOp op, const float* in, float* out, int64_t n, float p0, float p1) {
  const SimdKernels& kernels = simd();
  ::executorch::extension::parallel_for(
      0, n, unary_grain(op), [&](int64_t begin, int64_t end) {
        kernels.unary(op, in + begin, out + begin, end - begin, p0, p1);
      });
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
