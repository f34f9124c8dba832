// The rows of attention_f32 for one instruction set. The build compiles
// this file once per instruction set (as kernels/optimized does its SIMD
// code), each copy in a namespace of its own (ET_OPT_ISA_NAMESPACE);
// attention_f32.cpp picks the one the CPU runs.
//
// Per query row: keys are taken kBlock at a time; their scores (dot
// products over head_dim) go to a small array on the stack, their
// exponentials are taken together, and the output row, which accumulates
// the weighted values, is rescaled only when a block raises the running
// maximum (online softmax).

#include <executorch/extension/llm/custom_ops/attention_f32_simd.h>
#include <executorch/kernels/optimized/simd/vec.h>
#include <executorch/kernels/optimized/simd/vec_math.h>

namespace executorch {
namespace extension {
namespace llm {
namespace ET_OPT_ISA_NAMESPACE {

namespace {

namespace simd = ::executorch::kernels::optimized::simd;
using simd::kLanes;
using simd::Vec;

constexpr int64_t kBlock = 32; // a multiple of every kLanes

float dot(const float* a, const float* b, int64_t n) {
  Vec acc0{};
  Vec acc1{};
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    acc0 += simd::load(a + i) * simd::load(b + i);
    acc1 += simd::load(a + i + kLanes) * simd::load(b + i + kLanes);
  }
  for (; i + kLanes <= n; i += kLanes) {
    acc0 += simd::load(a + i) * simd::load(b + i);
  }
  if (i < n) {
    acc1 += simd::load_partial(a + i, n - i) * simd::load_partial(b + i, n - i);
  }
  return simd::reduce_add(acc0 + acc1);
}

// y += w * x
void axpy(float* y, float w, const float* x, int64_t n) {
  const Vec wv = simd::broadcast(w);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    simd::store(y + i, simd::load(y + i) + wv * simd::load(x + i));
  }
  if (i < n) {
    simd::store_partial(y + i,
                        simd::load_partial(y + i, n - i) +
                            wv * simd::load_partial(x + i, n - i),
                        n - i);
  }
}

// y *= w
void scale(float* y, float w, int64_t n) {
  const Vec wv = simd::broadcast(w);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    simd::store(y + i, simd::load(y + i) * wv);
  }
  if (i < n) {
    simd::store_partial(y + i, simd::load_partial(y + i, n - i) * wv, n - i);
  }
}

void attention_row(const AttentionProblem& p,
                   const float* q,
                   const float* key,
                   const float* value,
                   const float* mask_row,
                   int64_t keys,
                   int64_t position_stride,
                   float* o) {
  constexpr float kMinusInf = -__builtin_inff();
  const int64_t d = p.head_dim;
  std::fill(o, o + d, 0.0f);
  float running_max = kMinusInf;
  float denominator = 0.0f;
  alignas(64) float scores[kBlock];
  for (int64_t j0 = 0; j0 < keys; j0 += kBlock) {
    const int64_t n = std::min(kBlock, keys - j0);
    float block_max = kMinusInf;
    for (int64_t t = 0; t < n; ++t) {
      float score = dot(q, key + (j0 + t) * position_stride, d) * p.scale;
      if (mask_row != nullptr) {
        score += mask_row[j0 + t];
      }
      scores[t] = score;
      block_max = std::max(block_max, score);
    }
    if (block_max == kMinusInf) {
      continue; // every position of the block is masked
    }
    if (block_max > running_max) {
      const float rescale = std::exp(running_max - block_max);
      scale(o, rescale, d);
      denominator *= rescale;
      running_max = block_max;
    }
    std::fill(scores + n, scores + kBlock, kMinusInf);
    const Vec m = simd::broadcast(running_max);
    Vec sum{};
    for (int64_t t = 0; t < kBlock; t += kLanes) {
      const Vec w = simd::exp(simd::load(scores + t) - m);
      sum += w;
      simd::store(scores + t, w);
    }
    denominator += simd::reduce_add(sum);
    for (int64_t t = 0; t < n; ++t) {
      if (scores[t] != 0.0f) {
        axpy(o, scores[t], value + (j0 + t) * position_stride, d);
      }
    }
  }
  // A row that sees no position (everything masked) is NaN, as in torch.
  scale(o, denominator > 0.0f ? 1.0f / denominator : __builtin_nanf(""), d);
}

} // namespace

void attention_f32_rows(const AttentionProblem& p,
                        const float* query,
                        const float* key,
                        const float* value,
                        float* out,
                        int64_t row_begin,
                        int64_t row_end) {
  const float* mask = static_cast<const float*>(p.mask);
  const int64_t position_stride = p.kv_heads * p.head_dim;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t s = row % p.seq_len;
    const int64_t h = (row / p.seq_len) % p.heads;
    const int64_t b = row / (p.seq_len * p.heads);
    const int64_t start = p.cache_offset(b, 0, p.kv_head_of(h));
    attention_row(p,
                  query + p.query_offset(b, s, h),
                  key + start,
                  value + start,
                  mask == nullptr ? nullptr : mask + s * p.kv_len,
                  p.keys_for_row(s),
                  position_stride,
                  out + p.query_offset(b, s, h));
  }
}

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace llm
} // namespace extension
} // namespace executorch
