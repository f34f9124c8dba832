#pragma once

// Vec: the SIMD register of the instruction set a translation unit is
// compiled for, as a GCC/Clang vector extension. The build compiles the
// files that include this header once per instruction set, each with its
// flags and ET_OPT_VECTOR_BYTES: 64 for AVX-512, 32 for AVX2 + FMA, 16 for
// the portable build (SSE2 on x86-64, NEON on AArch64, scalar code where
// neither exists). Code written on Vec is therefore written once and runs
// at each machine's width; a new instruction set is one more build of the
// same sources. Everything lives in an inline namespace named after the
// instruction set (ET_OPT_ISA_NAMESPACE), so the builds' inline functions
// never merge at link time.

#include <cstdint>
#include <cstring>

#if !defined(ET_OPT_VECTOR_BYTES) || !defined(ET_OPT_ISA_NAMESPACE)
#error "ET_OPT_VECTOR_BYTES and ET_OPT_ISA_NAMESPACE are set by the build"
#endif

namespace executorch {
namespace kernels {
namespace optimized {
namespace simd {
inline namespace ET_OPT_ISA_NAMESPACE {

constexpr int kVecBytes = ET_OPT_VECTOR_BYTES;
constexpr int kLanes = kVecBytes / 4;

typedef float Vec __attribute__((vector_size(kVecBytes)));
typedef int32_t VecI __attribute__((vector_size(kVecBytes)));

// x - 0 is x for every x (-0 and NaN included), so the compiler drops the
// subtraction and keeps the broadcast; x + 0 would be a real add (it turns
// -0 into 0) without -ffast-math.
inline Vec broadcast(float x) {
  return x - Vec{};
}

inline VecI broadcast_i(int32_t x) {
  return VecI{} + x;
}

// Unaligned loads and stores (memcpy compiles to one vector move).
inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store(float* p, Vec v) {
  std::memcpy(p, &v, sizeof(v));
}

// The first n (< kLanes) lanes from p, the rest 0; and the first n lanes
// to p. For loop tails: they never touch memory past p + n.
inline Vec load_partial(const float* p, int64_t n) {
  float lanes[kLanes] = {};
  std::memcpy(lanes, p, static_cast<size_t>(n) * sizeof(float));
  return load(lanes);
}

inline void store_partial(float* p, Vec v, int64_t n) {
  float lanes[kLanes];
  store(lanes, v);
  std::memcpy(p, lanes, static_cast<size_t>(n) * sizeof(float));
}

// Reinterpret the bits.
inline VecI as_int(Vec v) {
  return reinterpret_cast<VecI>(v);
}

inline Vec as_float(VecI v) {
  return reinterpret_cast<Vec>(v);
}

// mask lanes are all ones (true) or zero (false), as comparisons give.
inline Vec select(VecI mask, Vec if_true, Vec if_false) {
  return as_float((mask & as_int(if_true)) | (~mask & as_int(if_false)));
}

// NaN-propagating max/min as in PyTorch: a NaN in either operand gives NaN.
inline Vec max(Vec a, Vec b) {
  return select((a > b) | (a != a), a, b);
}

inline Vec min(Vec a, Vec b) {
  return select((a < b) | (a != a), a, b);
}

inline Vec abs(Vec v) {
  return as_float(as_int(v) & broadcast_i(0x7fffffff));
}

inline float reduce_add(Vec v) {
  float lanes[kLanes];
  store(lanes, v);
  float sum = 0.0f;
  for (int i = 0; i < kLanes; ++i) {
    sum += lanes[i];
  }
  return sum;
}

inline float reduce_max(Vec v) {
  float lanes[kLanes];
  store(lanes, v);
  float m = lanes[0];
  for (int i = 1; i < kLanes; ++i) {
    m = (lanes[i] > m || lanes[i] != lanes[i]) ? lanes[i] : m;
  }
  return m;
}

// Rounds to the nearest integer (ties to even) in float, valid for
// |v| < 2^22, with the usual add-and-subtract of 1.5 * 2^23.
inline Vec round_nearest(Vec v) {
  const Vec magic = broadcast(12582912.0f);
  return (v + magic) - magic;
}

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace simd
} // namespace optimized
} // namespace kernels
} // namespace executorch
