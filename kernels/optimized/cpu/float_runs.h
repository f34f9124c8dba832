#pragma once

// The engine of the optimized elementwise kernels: a float32 operation over
// `out` with up to two inputs broadcast to it (any dim order), handed out as
// runs of contiguous output where each input is either contiguous too
// (step 1) or one broadcast value (step 0), e.g. a row of [N, C] + [C], a
// channel's plane of [N, C, H, W] * [C, 1, 1]. Dims are coalesced first, so
// a dense operation is one long run. Runs are spread over the thread pool
// (a long run is cut into pieces); work under `grain` elements (grain.h:
// kCheapGrain for memory-bound ops, kMathGrain for polynomial math) stays
// on the calling thread.

#include <cstdint>
#include <initializer_list>

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/runtime/core/function_ref.h>
#include <executorch/runtime/kernel/kernel_includes.h>

namespace executorch {
namespace kernels {
namespace optimized {

struct FloatRun {
  float* out;
  const float* in[2];
  int64_t step[2]; // 0 or 1
  int64_t n;
};

// Calls fn for runs covering `out`, possibly on several threads at once,
// each thread's runs at least `grain` elements. `out` has the broadcast
// shape already; every tensor is Float. Returns
// false, calling nothing, when the layouts do not reduce to such runs (the
// innermost dim is not contiguous in `out`, or is strided in an input);
// the caller then takes its general path.
bool for_each_float_run(
    const ::executorch::aten::Tensor& out,
    std::initializer_list<const ::executorch::aten::Tensor*> inputs,
    int64_t grain,
    ::executorch::runtime::FunctionRef<void(const FloatRun&)> fn);

// True when every tensor is Float.
bool all_float(
    std::initializer_list<const ::executorch::aten::Tensor*> tensors);

} // namespace optimized
} // namespace kernels
} // namespace executorch
