#pragma once

// MemoryManager: the allocators a Method draws from. All memory is supplied
// by the caller; the runtime never touches the heap.
//
// - method_allocator: the Method's own structures (values, tensors, kernel
//   pointers), allocated once at load time.
// - planned_memory: the buffers memory planning laid tensors out in; may be
//   null only for programs with no planned buffers.
// - temp_allocator: scratch memory for kernels and delegates, reset after
//   every kernel call; may be null.

#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>

namespace executorch {
namespace runtime {

class MemoryManager final {
 public:
  explicit MemoryManager(MemoryAllocator* method_allocator,
                         HierarchicalAllocator* planned_memory = nullptr,
                         MemoryAllocator* temp_allocator = nullptr)
      : method_allocator_(method_allocator),
        planned_memory_(planned_memory),
        temp_allocator_(temp_allocator) {}

  MemoryAllocator* method_allocator() const {
    return method_allocator_;
  }
  HierarchicalAllocator* planned_memory() const {
    return planned_memory_;
  }
  MemoryAllocator* temp_allocator() const {
    return temp_allocator_;
  }

 private:
  MemoryAllocator* method_allocator_;
  HierarchicalAllocator* planned_memory_;
  MemoryAllocator* temp_allocator_;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::MemoryManager;
} // namespace executor
} // namespace torch
