#pragma once

// Test helper: heap-backed allocators and planned buffers for one method,
// sized from its MethodMeta (or given explicitly to build bad setups).

#include <cstdint>
#include <memory>
#include <vector>

#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method_meta.h>

namespace executorch {
namespace runtime {
namespace testing {

class ManagedMemory {
 public:
  static constexpr size_t kPoolBytes = 64 * 1024;

  // One planned buffer per entry of `planned_sizes`.
  explicit ManagedMemory(const std::vector<size_t>& planned_sizes)
      : method_pool_(kPoolBytes),
        temp_pool_(kPoolBytes),
        method_allocator_(kPoolBytes, method_pool_.data()),
        temp_allocator_(kPoolBytes, temp_pool_.data()) {
    for (size_t size : planned_sizes) {
      planned_.emplace_back(size);
    }
    for (auto& buffer : planned_) {
      spans_.emplace_back(buffer.data(), buffer.size());
    }
    planned_memory_ = std::make_unique<HierarchicalAllocator>(
        Span<Span<uint8_t>>(spans_.data(), spans_.size()));
    manager_ = std::make_unique<MemoryManager>(
        &method_allocator_, planned_memory_.get(), &temp_allocator_);
  }

  // Planned buffers exactly as `meta` asks for.
  explicit ManagedMemory(const MethodMeta& meta)
      : ManagedMemory(planned_sizes(meta)) {}

  MemoryManager* manager() {
    return manager_.get();
  }
  MemoryAllocator& temp_allocator() {
    return temp_allocator_;
  }

 private:
  static std::vector<size_t> planned_sizes(const MethodMeta& meta) {
    std::vector<size_t> sizes;
    for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
      // A malformed (negative) size gets an empty buffer; the method load
      // reports it.
      const int64_t size = *meta.memory_planned_buffer_size(i);
      sizes.push_back(size < 0 ? 0 : static_cast<size_t>(size));
    }
    return sizes;
  }

  std::vector<uint8_t> method_pool_;
  std::vector<uint8_t> temp_pool_;
  std::vector<std::vector<uint8_t>> planned_;
  std::vector<Span<uint8_t>> spans_;
  MemoryAllocator method_allocator_;
  MemoryAllocator temp_allocator_;
  std::unique_ptr<HierarchicalAllocator> planned_memory_;
  std::unique_ptr<MemoryManager> manager_;
};

} // namespace testing
} // namespace runtime
} // namespace executorch
