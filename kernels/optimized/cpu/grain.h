#pragma once

// Grain sizes of the optimized kernels: the least work a parallel_for task
// gets, so that work under one grain stays on the calling thread.
//
// A split pays only when it saves more than a pool dispatch costs. The
// workers sleep between dispatches (extension/threadpool), and waking one
// cost ~20 us of wall-clock time on a 2-core AMD EPYC VM (an empty
// 2-chunk parallel_for after 200 us of work on the calling thread: 21.9 us;
// the same back to back, with the worker still awake: 0.5 us). So a split
// pays from ~40 us of work on one thread. Thread CPU time of ViT-tiny's
// shapes on one thread there: a [197, 3, 64] -> [3, 197, 64] copy 8.5 us
// (151 KB), a [3, 197, 64] -> [3, 64, 197] transpose 5.0 us, a dense copy
// of 151 KB 2.7 us, layer norm of [197, 192] 10 us, relu of [197, 768]
// 15 us, GELU of [197, 768] 106 us, softmax of [3, 197, 197] 143 us. Each
// grain below is about 40 us of its kind of work.

#include <cstdint>

namespace executorch {
namespace kernels {
namespace optimized {

// Copies, transposes, expands (bytes moved): 18-55 GB/s.
constexpr int64_t kCopyGrainBytes = int64_t{1} << 20;
// Memory-bound elementwise float ops (add, mul, relu, clamp, affine, ...):
// ~0.1 ns per element.
constexpr int64_t kCheapGrain = int64_t{1} << 18;
// Layer norm (elements): two passes over each row, ~0.26 ns per element.
constexpr int64_t kRowNormGrain = int64_t{1} << 17;
// Polynomial math (exp, tanh, sigmoid, GELU, SiLU) and softmax (elements):
// 0.5-1.2 ns per element.
constexpr int64_t kMathGrain = int64_t{1} << 15;

} // namespace optimized
} // namespace kernels
} // namespace executorch
