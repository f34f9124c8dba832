#pragma once

// Test helper: bounded method and scratch allocators, and planned buffers
// for one method (extension/memory_allocator/planned_memory.h) sized from
// its MethodMeta or given explicitly to build bad setups.

#include <cstdint>
#include <memory>
#include <vector>

#include <executorch/extension/memory_allocator/planned_memory.h>
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
        temp_allocator_(kPoolBytes, temp_pool_.data()),
        planned_(planned_sizes),
        manager_(&method_allocator_, planned_.allocator(), &temp_allocator_) {}

  // Planned buffers exactly as `meta` asks for.
  explicit ManagedMemory(const MethodMeta& meta)
      : ManagedMemory(::executorch::extension::PlannedMemory::sizes_of(meta)) {
  }

  MemoryManager* manager() {
    return &manager_;
  }
  MemoryAllocator& temp_allocator() {
    return temp_allocator_;
  }

 private:
  std::vector<uint8_t> method_pool_;
  std::vector<uint8_t> temp_pool_;
  MemoryAllocator method_allocator_;
  MemoryAllocator temp_allocator_;
  ::executorch::extension::PlannedMemory planned_;
  MemoryManager manager_;
};

} // namespace testing
} // namespace runtime
} // namespace executorch
