// llama::update_cache.out and llama::update_cache_with_indices.out: write
// rows of keys or values into a KV cache in place. `out` is a one-element
// placeholder (the cache is the result); it is set to 0.

#include <cinttypes>
#include <cstring>

#include <executorch/extension/llm/custom_ops/kv_cache.h>

namespace torch {
namespace executor {
namespace native {

namespace {

bool clear_placeholder(KernelRuntimeContext& ctx, const char* op, Tensor& out) {
  const SizesType one[] = {1};
  if (!resize_out(ctx, op, "out", out, ArrayRef<SizesType>(one, 1))) {
    return false;
  }
  std::memset(out.mutable_data_ptr(), 0, out.nbytes());
  return true;
}

} // namespace

Tensor& update_cache_out(KernelRuntimeContext& ctx,
                         const Tensor& value,
                         Tensor& cache,
                         int64_t start_pos,
                         Tensor& out) {
  constexpr const char* kOp = "llama::update_cache.out";
  if (!check_cache_update(
          ctx, kOp, "value", value, "cache", cache, start_pos) ||
      !clear_placeholder(ctx, kOp, out)) {
    return out;
  }
  write_cache(value, cache, start_pos);
  return out;
}

Tensor& update_cache_with_indices_out(KernelRuntimeContext& ctx,
                                      const Tensor& value,
                                      Tensor& cache,
                                      int64_t start_pos,
                                      const Tensor& indices,
                                      Tensor& out) {
  constexpr const char* kOp = "llama::update_cache_with_indices.out";
  // The positions come from indices; start_pos only has to be valid.
  (void)start_pos;
  if (!check_cache_update(ctx, kOp, "value", value, "cache", cache, 0)) {
    return out;
  }
  if (indices.dim() != 2 || indices.scalar_type() != ScalarType::Long ||
      indices.size(0) != value.size(0) || indices.size(1) != value.size(1)) {
    char sizes[96];
    fail_arg(ctx,
             kOp,
             "indices must be int64 [batch, seq] = [%" PRId64 ", %" PRId64
             "], got %s of shape %s",
             static_cast<int64_t>(value.size(0)),
             static_cast<int64_t>(value.size(1)),
             ::executorch::runtime::toString(indices.scalar_type()),
             format_sizes(indices.sizes(), sizes, sizeof(sizes)));
    return out;
  }
  const int64_t* index = indices.const_data_ptr<int64_t>();
  const int64_t max_seq = cache.size(1);
  for (int64_t i = 0; i < indices.numel(); ++i) {
    if (index[i] < 0 || index[i] >= max_seq) {
      fail_arg(ctx,
               kOp,
               "indices[%" PRId64 "] = %" PRId64
               " is outside the cache's %" PRId64 " positions",
               i,
               index[i],
               max_seq);
      return out;
    }
  }
  if (!clear_placeholder(ctx, kOp, out)) {
    return out;
  }
  const size_t row_bytes = static_cast<size_t>(value.size(2)) *
                           static_cast<size_t>(value.size(3)) *
                           value.element_size();
  const auto* src = static_cast<const uint8_t*>(value.const_data_ptr());
  auto* dst = static_cast<uint8_t*>(cache.mutable_data_ptr());
  const int64_t seq = value.size(1);
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t b = i / seq;
    std::memcpy(dst + (b * max_seq + index[i]) * row_bytes,
                src + i * row_bytes,
                row_bytes);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
