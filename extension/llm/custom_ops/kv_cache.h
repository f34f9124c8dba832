#pragma once

// Writing rows into a KV cache, shared by llama::update_cache and
// llama::sdpa_with_kv_cache. Caches are [batch, max_seq, heads, head_dim],
// the rows written [batch, seq, heads, head_dim], both contiguous.

#include <executorch/kernels/portable/util/checks.h>

namespace torch {
namespace executor {
namespace native {

// Checks that `value` can go into `cache` at start_pos .. start_pos + seq
// - 1; on failure logs "<op>: ..." naming the argument and fails `ctx`.
bool check_cache_update(KernelRuntimeContext& ctx,
                        const char* op,
                        const char* value_name,
                        const Tensor& value,
                        const char* cache_name,
                        const Tensor& cache,
                        int64_t start_pos);

// cache[:, start_pos:start_pos + seq] = value (after check_cache_update).
void write_cache(const Tensor& value, Tensor& cache, int64_t start_pos);

// Checks that `t` is 4-D and contiguous.
bool check_4d_contiguous(KernelRuntimeContext& ctx,
                         const char* op,
                         const char* name,
                         const Tensor& t);

} // namespace native
} // namespace executor
} // namespace torch
