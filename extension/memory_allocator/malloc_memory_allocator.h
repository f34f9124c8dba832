#pragma once

// MallocMemoryAllocator: a MemoryAllocator that takes each allocation from
// the heap instead of a fixed buffer, for hosts (tools, Python bindings)
// where sizing a method's arena up front is a burden. reset() and the
// destructor free everything it handed out. Not thread-safe, like every
// MemoryAllocator.

#include <cstdint>
#include <cstdlib>
#include <vector>

#include <executorch/runtime/core/memory_allocator.h>

namespace executorch {
namespace extension {

class MallocMemoryAllocator final
    : public ::executorch::runtime::MemoryAllocator {
 public:
  // The base class's fixed buffer is unused: it is empty.
  MallocMemoryAllocator() : MemoryAllocator(0, nullptr) {}
  MallocMemoryAllocator(const MallocMemoryAllocator&) = delete;
  MallocMemoryAllocator& operator=(const MallocMemoryAllocator&) = delete;
  ~MallocMemoryAllocator() override {
    reset();
  }

  void* allocate(size_t size, size_t alignment = kDefaultAlignment) override {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      ET_LOG(Error, "Alignment %zu is not a power of two", alignment);
      return nullptr;
    }
    // Over-allocate so that an aligned start exists inside the block.
    if (size > SIZE_MAX - alignment) {
      return nullptr;
    }
    void* block = std::malloc(size + alignment - 1);
    if (block == nullptr) {
      ET_LOG(Error, "Out of heap memory: %zu bytes requested", size);
      return nullptr;
    }
    blocks_.push_back(block);
    const uintptr_t start = reinterpret_cast<uintptr_t>(block);
    return reinterpret_cast<void*>((start + alignment - 1) &
                                   ~static_cast<uintptr_t>(alignment - 1));
  }

  void reset() override {
    for (void* block : blocks_) {
      std::free(block);
    }
    blocks_.clear();
  }

 private:
  std::vector<void*> blocks_;
};

} // namespace extension
} // namespace executorch
