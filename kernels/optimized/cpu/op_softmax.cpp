// _softmax and _log_softmax on contiguous float32: rows along the last dim
// vectorized within a row, other dims a block of adjacent lanes at a time;
// rows spread over the thread pool. Anything else goes to the portable
// kernels.

#include <algorithm>

#include <executorch/kernels/optimized/cpu/float_ops.h>
#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

// Lanes per softmax_lanes call: a few vectors wide, its scratch in L1.
constexpr int64_t kLaneBlock = 64;

} // namespace

void softmax_float(const float* in,
                   float* out,
                   int64_t outer,
                   int64_t n,
                   int64_t inner,
                   bool log) {
  if (outer <= 0 || n <= 0 || inner <= 0) {
    return;
  }
  const SimdKernels& kernels = simd();
  if (inner == 1) {
    ::executorch::extension::parallel_for(
        0,
        outer,
        std::max<int64_t>(1, kMathGrain / n),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            kernels.softmax_row(in + r * n, out + r * n, n, log);
          }
        });
    return;
  }
  const int64_t blocks = (inner + kLaneBlock - 1) / kLaneBlock;
  ::executorch::extension::parallel_for(
      0,
      outer * blocks,
      std::max<int64_t>(1, kMathGrain / (n * kLaneBlock)),
      [&](int64_t begin, int64_t end) {
        float* scratch =
            static_cast<float*>(thread_scratch(kLaneBlock * sizeof(float)));
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / blocks;
          const int64_t l0 = t % blocks * kLaneBlock;
          const int64_t offset = o * n * inner + l0;
          kernels.softmax_lanes(in + offset,
                                out + offset,
                                n,
                                inner,
                                std::min(kLaneBlock, inner - l0),
                                log,
                                scratch);
        }
      });
}

} // namespace optimized
} // namespace kernels
} // namespace executorch

namespace torch {
namespace executor {
namespace native {

namespace {

// true when the float path wrote `out` or failed `ctx`; false when the
// portable kernel should run instead.
bool float_softmax(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& in,
                   int64_t dim,
                   bool half_to_float,
                   Tensor& out,
                   bool log) {
  if (half_to_float || in.scalar_type() != ScalarType::Float ||
      out.scalar_type() != ScalarType::Float ||
      !::executorch::runtime::tensor_is_contiguous(in) ||
      !::executorch::runtime::tensor_is_contiguous(out)) {
    return false;
  }
  const int64_t rank = in.dim();
  if (dim < -std::max<int64_t>(rank, 1) || dim >= std::max<int64_t>(rank, 1)) {
    return false;
  }
  if (dim < 0) {
    dim += std::max<int64_t>(rank, 1);
  }
  if (!resize_like(ctx, op, out, in)) {
    return true;
  }
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    (d < dim ? outer : inner) *= d == dim ? 1 : in.size(d);
  }
  const int64_t n = rank == 0 ? 1 : in.size(dim);
  ::executorch::kernels::optimized::softmax_float(in.const_data_ptr<float>(),
                                                  out.mutable_data_ptr<float>(),
                                                  outer,
                                                  n,
                                                  inner,
                                                  log);
  return true;
}

} // namespace

Tensor& opt_softmax_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        int64_t dim,
                        bool half_to_float,
                        Tensor& out) {
  if (!float_softmax(ctx,
                     "_softmax.out",
                     self,
                     dim,
                     half_to_float,
                     out,
                     /*log=*/false)) {
    softmax_out(ctx, self, dim, half_to_float, out);
  }
  return out;
}

Tensor& opt_log_softmax_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            int64_t dim,
                            bool half_to_float,
                            Tensor& out) {
  if (!float_softmax(ctx,
                     "_log_softmax.out",
                     self,
                     dim,
                     half_to_float,
                     out,
                     /*log=*/true)) {
    log_softmax_out(ctx, self, dim, half_to_float, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
