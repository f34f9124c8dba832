#pragma once

// Scaled dot-product attention over a KV cache, the computation behind
// llama::custom_sdpa and llama::sdpa_with_kv_cache.
//
// Layouts are upstream's: query and output [batch, seq, heads, head_dim],
// key and value [batch, max_seq, kv_heads, head_dim], each contiguous.
// Query head h reads key/value head h / (heads / kv_heads) (grouped-query
// attention). Query row s stands at position start_pos + s; it attends to
// the first `kv_len` cache positions, or with `causal` only to those up to
// its own. An optional additive mask [seq, kv_len] is added to the scores.
//
// Two implementations of the same arithmetic: attention_reference (plain
// loops, any float type, the portable kernel) and attention_f32 (float32,
// vectorised for the CPU's instruction set and split over the thread pool;
// it allocates nothing). Both use one pass over the keys with a running
// maximum (online softmax), so neither needs a scores buffer.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace executorch {
namespace extension {
namespace llm {

struct AttentionProblem {
  int64_t batch;
  int64_t seq_len;
  int64_t heads;
  int64_t kv_heads;
  int64_t head_dim;
  int64_t max_seq;   // positions in the key/value tensors
  int64_t kv_len;    // positions attended (<= max_seq)
  int64_t start_pos; // position of query row 0
  bool causal;
  float scale;
  const void* mask; // [seq_len, kv_len] of the query's type, or null

  // How many cache positions query row s attends to.
  int64_t keys_for_row(int64_t s) const {
    return causal ? std::min(start_pos + s + 1, kv_len) : kv_len;
  }
  // Element offsets of row s / position j of head h in batch b.
  int64_t query_offset(int64_t b, int64_t s, int64_t h) const {
    return ((b * seq_len + s) * heads + h) * head_dim;
  }
  int64_t cache_offset(int64_t b, int64_t j, int64_t kv_h) const {
    return ((b * max_seq + j) * kv_heads + kv_h) * head_dim;
  }
  int64_t kv_head_of(int64_t h) const {
    return h / (heads / kv_heads);
  }
  // The rows of the problem, numbered (b, h, s) with s fastest, so that
  // neighbouring rows read the same key/value head.
  int64_t rows() const {
    return batch * heads * seq_len;
  }
};

// The largest head_dim the kernels take (LLMs use 64 to 256): the
// reference keeps one output row in float on the stack.
constexpr int64_t kMaxHeadDim = 512;

// Reference attention: T is float, double or the runtime's Half/BFloat16;
// arithmetic in float (double for double). p.head_dim <= kMaxHeadDim.
template <typename T>
void attention_reference(const AttentionProblem& p,
                         const T* query,
                         const T* key,
                         const T* value,
                         T* out) {
  using Acc = typename std::
      conditional<std::is_same<T, double>::value, double, float>::type;
  constexpr Acc kMinusInf = -std::numeric_limits<Acc>::infinity();
  const T* mask = static_cast<const T*>(p.mask);
  Acc acc[kMaxHeadDim];
  for (int64_t row = 0; row < p.rows(); ++row) {
    const int64_t s = row % p.seq_len;
    const int64_t h = (row / p.seq_len) % p.heads;
    const int64_t b = row / (p.seq_len * p.heads);
    const int64_t kv_h = p.kv_head_of(h);
    const T* q = query + p.query_offset(b, s, h);
    // acc accumulates the weighted values; it is rescaled whenever a
    // larger score turns up.
    Acc running_max = kMinusInf;
    Acc denominator = 0;
    std::fill(acc, acc + p.head_dim, Acc(0));
    const int64_t keys = p.keys_for_row(s);
    for (int64_t j = 0; j < keys; ++j) {
      const T* k = key + p.cache_offset(b, j, kv_h);
      Acc score = 0;
      for (int64_t d = 0; d < p.head_dim; ++d) {
        score += static_cast<Acc>(q[d]) * static_cast<Acc>(k[d]);
      }
      score *= static_cast<Acc>(p.scale);
      if (mask != nullptr) {
        score += static_cast<Acc>(mask[s * p.kv_len + j]);
      }
      if (score == kMinusInf) {
        continue;
      }
      if (score > running_max) {
        const Acc rescale = std::exp(running_max - score);
        for (int64_t d = 0; d < p.head_dim; ++d) {
          acc[d] *= rescale;
        }
        denominator *= rescale;
        running_max = score;
      }
      const Acc weight = std::exp(score - running_max);
      denominator += weight;
      const T* v = value + p.cache_offset(b, j, kv_h);
      for (int64_t d = 0; d < p.head_dim; ++d) {
        acc[d] += weight * static_cast<Acc>(v[d]);
      }
    }
    // A row that sees no position (everything masked) is NaN, as in torch.
    const Acc inverse = denominator > 0 ? Acc(1) / denominator
                                        : std::numeric_limits<Acc>::quiet_NaN();
    T* o = out + p.query_offset(b, s, h);
    for (int64_t d = 0; d < p.head_dim; ++d) {
      o[d] = static_cast<T>(acc[d] * inverse);
    }
  }
}

// Optimized float32 attention (attention_f32.cpp); `mask` is float.
void attention_f32(const AttentionProblem& p,
                   const float* query,
                   const float* key,
                   const float* value,
                   float* out);

// The name of the instruction set attention_f32 runs with ("avx2", ...).
const char* attention_f32_isa();

} // namespace llm
} // namespace extension
} // namespace executorch
