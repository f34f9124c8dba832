#pragma once

// Grain sizes of the optimized kernels: the least work a parallel_for task
// gets, so that work under one grain stays on the calling thread.
//
// A split pays only when it saves more than a pool dispatch costs. The
// pool's workers spin for ~300 us after a job, and a dispatch to an awake
// worker costs the caller ~0.5 us; a sleeping worker is woken but never
// waited for (extension/threadpool/README.md, pool_dispatch_benchmark). So
// a split pays from a few microseconds of work: each grain below is about
// 5 us of its kind of work on one thread. (With Debian's pthreadpool every
// dispatch woke a sleeping worker for ~20 us and the grains were 8 times
// larger; MobileNetV2 int8 at 2 threads ran 2.89 ms with those thresholds
// and 1.88-1.99 with none, quiet machine.) Thread CPU time of ViT-tiny's
// shapes on one thread on a 2-core AMD EPYC VM: a [197, 3, 64] ->
// [3, 197, 64] copy 8.5 us (151 KB), a [3, 197, 64] -> [3, 64, 197]
// transpose 5.0 us, a dense copy of 151 KB 2.7 us, layer norm of
// [197, 192] 10 us, relu of [197, 768] 15 us, GELU of [197, 768] 106 us,
// softmax of [3, 197, 197] 143 us.

#include <cstdint>

namespace executorch {
namespace kernels {
namespace optimized {

// Copies, transposes, expands (bytes moved): 18-55 GB/s.
constexpr int64_t kCopyGrainBytes = int64_t{1} << 17;
// Memory-bound elementwise float ops (add, mul, relu, clamp, affine, ...):
// ~0.1 ns per element.
constexpr int64_t kCheapGrain = int64_t{1} << 15;
// Layer norm (elements): two passes over each row, ~0.26 ns per element.
constexpr int64_t kRowNormGrain = int64_t{1} << 14;
// Polynomial math (exp, tanh, sigmoid, GELU, SiLU) and softmax (elements):
// 0.5-1.2 ns per element.
constexpr int64_t kMathGrain = int64_t{1} << 12;
// Matrix products (multiply-adds): ~30 G multiply-adds/s on one thread.
constexpr int64_t kGemmGrainMacs = int64_t{1} << 17;

} // namespace optimized
} // namespace kernels
} // namespace executorch
