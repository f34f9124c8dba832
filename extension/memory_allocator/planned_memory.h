#pragma once

// PlannedMemory: the planned buffers of one method on the heap, sized as its
// MethodMeta declares, behind the HierarchicalAllocator a MemoryManager
// takes. This is the one place hosted code (Module, the Python bindings, the
// runtime's test helpers) turns a MethodMeta into planned memory.
//
// A size the program declares as negative gets an empty buffer, so that
// Program::load_method, which checks every planned buffer, reports it with
// the method and buffer index.
//
// Ownership: the PlannedMemory owns the buffers; it must outlive every
// Method loaded with allocator(). Not copyable or movable (the allocator
// points into it).

#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/method_meta.h>

namespace executorch {
namespace extension {

class PlannedMemory final {
 public:
  // One buffer of each of `sizes` bytes (tests use this to build setups the
  // program did not ask for).
  explicit PlannedMemory(const std::vector<size_t>& sizes)
      : buffers_(sizes.begin(), sizes.end()),
        spans_(make_spans(buffers_)),
        allocator_({spans_.data(), spans_.size()}) {}

  // The buffers `meta` declares.
  explicit PlannedMemory(const ::executorch::runtime::MethodMeta& meta)
      : PlannedMemory(sizes_of(meta)) {}

  PlannedMemory(const PlannedMemory&) = delete;
  PlannedMemory& operator=(const PlannedMemory&) = delete;
  PlannedMemory(PlannedMemory&&) = delete;
  PlannedMemory& operator=(PlannedMemory&&) = delete;

  ::executorch::runtime::HierarchicalAllocator* allocator() {
    return &allocator_;
  }

  // The sizes `meta` declares, negative ones as 0.
  static std::vector<size_t> sizes_of(
      const ::executorch::runtime::MethodMeta& meta) {
    std::vector<size_t> sizes;
    for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
      const auto size = meta.memory_planned_buffer_size(i);
      sizes.push_back(size.ok() && *size > 0 ? static_cast<size_t>(*size) : 0);
    }
    return sizes;
  }

 private:
  static std::vector<::executorch::runtime::Span<uint8_t>> make_spans(
      std::vector<std::vector<uint8_t>>& buffers) {
    std::vector<::executorch::runtime::Span<uint8_t>> spans;
    for (auto& buffer : buffers) {
      spans.emplace_back(buffer.data(), buffer.size());
    }
    return spans;
  }

  std::vector<std::vector<uint8_t>> buffers_;
  std::vector<::executorch::runtime::Span<uint8_t>> spans_;
  ::executorch::runtime::HierarchicalAllocator allocator_;
};

} // namespace extension
} // namespace executorch
