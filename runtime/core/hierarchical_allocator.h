#pragma once

// HierarchicalAllocator: the planned buffers a method's non-constant tensors
// live in. Memory planning assigns each tensor a (memory_id, offset); buffer
// memory_id of the program corresponds to buffers[memory_id - 1] here, since
// id 0 is reserved in the format.

#include <cstdint>

#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

class HierarchicalAllocator final {
 public:
  explicit HierarchicalAllocator(Span<Span<uint8_t>> buffers)
      : buffers_(buffers) {}

  // Pointer to `size` bytes at `offset_bytes` into buffer `memory_id`, after
  // checking that the range lies inside that buffer.
  ET_NODISCARD Result<void*> get_offset_address(uint32_t memory_id,
                                                size_t offset_bytes,
                                                size_t size_bytes) {
    ET_CHECK_OR_RETURN_ERROR(memory_id < buffers_.size(),
                             InvalidArgument,
                             "memory_id %u out of range: %zu planned buffers",
                             memory_id,
                             buffers_.size());
    Span<uint8_t> buffer = buffers_[memory_id];
    ET_CHECK_OR_RETURN_ERROR(
        offset_bytes <= buffer.size() &&
            size_bytes <= buffer.size() - offset_bytes,
        MemoryAllocationFailed,
        "offset %zu + size %zu exceeds planned buffer %u of %zu bytes",
        offset_bytes,
        size_bytes,
        memory_id,
        buffer.size());
    return static_cast<void*>(buffer.data() + offset_bytes);
  }

  size_t num_buffers() const {
    return buffers_.size();
  }

 private:
  Span<Span<uint8_t>> buffers_;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::HierarchicalAllocator;
} // namespace executor
} // namespace torch
