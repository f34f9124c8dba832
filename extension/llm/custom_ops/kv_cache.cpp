#include <executorch/extension/llm/custom_ops/kv_cache.h>

#include <cinttypes>
#include <cstring>

namespace torch {
namespace executor {
namespace native {

bool check_4d_contiguous(KernelRuntimeContext& ctx,
                         const char* op,
                         const char* name,
                         const Tensor& t) {
  if (t.dim() != 4) {
    char sizes[96];
    fail_arg(ctx,
             op,
             "%s must be 4-D [batch, seq, heads, head_dim], got %s",
             name,
             format_sizes(t.sizes(), sizes, sizeof(sizes)));
    return false;
  }
  if (!::executorch::runtime::tensor_is_contiguous(t)) {
    fail_arg(ctx, op, "%s must be contiguous (default dim order)", name);
    return false;
  }
  return true;
}

bool check_cache_update(KernelRuntimeContext& ctx,
                        const char* op,
                        const char* value_name,
                        const Tensor& value,
                        const char* cache_name,
                        const Tensor& cache,
                        int64_t start_pos) {
  if (!check_4d_contiguous(ctx, op, value_name, value) ||
      !check_4d_contiguous(ctx, op, cache_name, cache)) {
    return false;
  }
  if (value.scalar_type() != cache.scalar_type()) {
    fail_arg(ctx,
             op,
             "%s has dtype %s, %s has %s",
             value_name,
             ::executorch::runtime::toString(value.scalar_type()),
             cache_name,
             ::executorch::runtime::toString(cache.scalar_type()));
    return false;
  }
  static const char* const kDimNames[] = {"batch", "seq", "heads", "head_dim"};
  for (int d : {0, 2, 3}) {
    if (value.size(d) != cache.size(d)) {
      fail_arg(ctx,
               op,
               "%s and %s differ in %s (dim %d): %" PRId64 " vs %" PRId64,
               value_name,
               cache_name,
               kDimNames[d],
               d,
               static_cast<int64_t>(value.size(d)),
               static_cast<int64_t>(cache.size(d)));
      return false;
    }
  }
  if (start_pos < 0 || start_pos + value.size(1) > cache.size(1)) {
    fail_arg(ctx,
             op,
             "start_pos %" PRId64 " + seq %" PRId64 " exceeds %s's %" PRId64
             " positions",
             start_pos,
             static_cast<int64_t>(value.size(1)),
             cache_name,
             static_cast<int64_t>(cache.size(1)));
    return false;
  }
  return true;
}

void write_cache(const Tensor& value, Tensor& cache, int64_t start_pos) {
  if (value.numel() == 0) {
    return;
  }
  const size_t row_bytes = static_cast<size_t>(value.size(2)) *
                           static_cast<size_t>(value.size(3)) *
                           value.element_size();
  const size_t value_batch_bytes = row_bytes * value.size(1);
  const size_t cache_batch_bytes = row_bytes * cache.size(1);
  const auto* src = static_cast<const uint8_t*>(value.const_data_ptr());
  auto* dst = static_cast<uint8_t*>(cache.mutable_data_ptr());
  for (int64_t b = 0; b < value.size(0); ++b) {
    std::memcpy(dst + b * cache_batch_bytes + start_pos * row_bytes,
                src + b * value_batch_bytes,
                value_batch_bytes);
  }
}

} // namespace native
} // namespace executor
} // namespace torch
