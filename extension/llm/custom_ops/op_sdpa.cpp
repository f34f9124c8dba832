// llama::custom_sdpa.out and llama::sdpa_with_kv_cache.out: attention of
// the query over a KV cache (attention.h says what is computed). float32
// runs the optimized attention (vectorised, threaded, no allocation);
// float16, bfloat16 and builds without it run the reference loops.

#include <cinttypes>
#include <cmath>

#include <executorch/extension/llm/custom_ops/attention.h>
#include <executorch/extension/llm/custom_ops/kv_cache.h>

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::extension::llm::AttentionProblem;
using ::executorch::extension::llm::kMaxHeadDim;
using ::executorch::runtime::toString;

// Checks the arguments, resizes `out` to the query's shape and describes
// the problem in `p`.
bool make_problem(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& q,
                  const Tensor& k,
                  const Tensor& v,
                  int64_t start_pos,
                  const std::optional<Tensor>& attn_mask,
                  double dropout_p,
                  bool is_causal,
                  const std::optional<double>& scale,
                  const Tensor& out,
                  AttentionProblem* p) {
  if (!check_4d_contiguous(ctx, op, "query", q) ||
      !check_4d_contiguous(ctx, op, "key", k) ||
      !check_4d_contiguous(ctx, op, "value", v) ||
      !check_same_dtype(ctx, op, "key", k, q) ||
      !check_same_dtype(ctx, op, "value", v, q) ||
      !check_same_dtype(ctx, op, "out", out, q) ||
      !resize_like(ctx, op, out, q)) {
    return false;
  }
  const ScalarType dtype = q.scalar_type();
  if (dtype != ScalarType::Float && dtype != ScalarType::Half &&
      dtype != ScalarType::BFloat16) {
    fail_arg(ctx,
             op,
             "query must be Float, Half or BFloat16, got %s",
             toString(dtype));
    return false;
  }
  char a[96];
  char b[96];
  char c[96];
  if (!k.sizes().equals(v.sizes()) || k.size(0) != q.size(0) ||
      k.size(3) != q.size(3)) {
    fail_arg(ctx,
             op,
             "key %s and value %s must be equal and match query %s in batch "
             "and head_dim",
             format_sizes(k.sizes(), a, sizeof(a)),
             format_sizes(v.sizes(), b, sizeof(b)),
             format_sizes(q.sizes(), c, sizeof(c)));
    return false;
  }
  if (k.size(2) == 0 || q.size(2) % k.size(2) != 0) {
    fail_arg(ctx,
             op,
             "query's %" PRId64 " heads are not a multiple of key's %" PRId64,
             static_cast<int64_t>(q.size(2)),
             static_cast<int64_t>(k.size(2)));
    return false;
  }
  if (q.size(3) > kMaxHeadDim) {
    fail_arg(ctx,
             op,
             "head_dim %" PRId64 " exceeds the supported %" PRId64,
             static_cast<int64_t>(q.size(3)),
             kMaxHeadDim);
    return false;
  }
  if (dropout_p != 0.0) {
    fail_arg(ctx, op, "drpout_p must be 0 (inference), got %g", dropout_p);
    return false;
  }
  p->batch = q.size(0);
  p->seq_len = q.size(1);
  p->heads = q.size(2);
  p->kv_heads = k.size(2);
  p->head_dim = q.size(3);
  p->max_seq = k.size(1);
  p->start_pos = start_pos;
  p->causal = is_causal;
  p->scale = static_cast<float>(
      scale.has_value() ? scale.value()
                        : 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  p->mask = nullptr;
  if (attn_mask.has_value()) {
    // With a mask every cache position is a candidate; the mask decides.
    const Tensor& mask = attn_mask.value();
    if (is_causal) {
      fail_arg(ctx, op, "attn_mask and is_causal cannot both be given");
      return false;
    }
    if (!check_same_dtype(ctx, op, "attn_mask", mask, q)) {
      return false;
    }
    if (mask.dim() != 2 || mask.size(0) != q.size(1) ||
        mask.size(1) != k.size(1) ||
        !::executorch::runtime::tensor_is_contiguous(mask)) {
      fail_arg(ctx,
               op,
               "attn_mask must be contiguous [seq, max_seq] = [%" PRId64
               ", %" PRId64 "], got %s",
               static_cast<int64_t>(q.size(1)),
               static_cast<int64_t>(k.size(1)),
               format_sizes(mask.sizes(), a, sizeof(a)));
      return false;
    }
    p->kv_len = k.size(1);
    p->mask = mask.const_data_ptr();
    return true;
  }
  if (start_pos < 0 || start_pos + q.size(1) > k.size(1)) {
    fail_arg(ctx,
             op,
             "start_pos %" PRId64 " + seq %" PRId64
             " exceeds the cache's %" PRId64 " positions",
             start_pos,
             static_cast<int64_t>(q.size(1)),
             static_cast<int64_t>(k.size(1)));
    return false;
  }
  p->kv_len = start_pos + q.size(1);
  return true;
}

void run_attention(KernelRuntimeContext& ctx,
                   const char* op,
                   const AttentionProblem& p,
                   const Tensor& q,
                   const Tensor& k,
                   const Tensor& v,
                   Tensor& out) {
#ifdef ET_LLM_OPTIMIZED_ATTENTION
  if (q.scalar_type() == ScalarType::Float) {
    ::executorch::extension::llm::attention_f32(p,
                                                q.const_data_ptr<float>(),
                                                k.const_data_ptr<float>(),
                                                v.const_data_ptr<float>(),
                                                out.mutable_data_ptr<float>());
    return;
  }
#endif
  ET_SWITCH_FLOATHBF16_TYPES(q.scalar_type(), ctx, op, CTYPE, [&]() {
    ::executorch::extension::llm::attention_reference<CTYPE>(
        p,
        q.const_data_ptr<CTYPE>(),
        k.const_data_ptr<CTYPE>(),
        v.const_data_ptr<CTYPE>(),
        out.mutable_data_ptr<CTYPE>());
  });
}

} // namespace

Tensor& custom_sdpa_out(KernelRuntimeContext& ctx,
                        const Tensor& query,
                        const Tensor& key,
                        const Tensor& value,
                        int64_t start_pos,
                        const std::optional<Tensor>& attn_mask,
                        double drpout_p,
                        bool is_causal,
                        std::optional<double> scale,
                        Tensor& out) {
  constexpr const char* kOp = "llama::custom_sdpa.out";
  AttentionProblem p;
  if (!make_problem(ctx,
                    kOp,
                    query,
                    key,
                    value,
                    start_pos,
                    attn_mask,
                    drpout_p,
                    is_causal,
                    scale,
                    out,
                    &p)) {
    return out;
  }
  run_attention(ctx, kOp, p, query, key, value, out);
  return out;
}

Tensor& sdpa_with_kv_cache_out(KernelRuntimeContext& ctx,
                               const Tensor& query,
                               const Tensor& key,
                               const Tensor& value,
                               Tensor& key_cache,
                               Tensor& value_cache,
                               int64_t start_pos,
                               int64_t seq_len,
                               const std::optional<Tensor>& attn_mask,
                               double drpout_p,
                               bool is_causal,
                               std::optional<double> scale,
                               Tensor& out) {
  constexpr const char* kOp = "llama::sdpa_with_kv_cache.out";
  AttentionProblem p;
  if (!check_4d_contiguous(ctx, kOp, "query", query)) {
    return out;
  }
  if (seq_len != query.size(1)) {
    fail_arg(ctx,
             kOp,
             "seq_len %" PRId64 " differs from query's %" PRId64 " rows",
             seq_len,
             static_cast<int64_t>(query.size(1)));
    return out;
  }
  if (!check_cache_update(
          ctx, kOp, "key", key, "key_cache", key_cache, start_pos) ||
      !check_cache_update(
          ctx, kOp, "value", value, "value_cache", value_cache, start_pos) ||
      !make_problem(ctx,
                    kOp,
                    query,
                    key_cache,
                    value_cache,
                    start_pos,
                    attn_mask,
                    drpout_p,
                    is_causal,
                    scale,
                    out,
                    &p)) {
    return out;
  }
  write_cache(key, key_cache, start_pos);
  write_cache(value, value_cache, start_pos);
  run_attention(ctx, kOp, p, query, key_cache, value_cache, out);
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
