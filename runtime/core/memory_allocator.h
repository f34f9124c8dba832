#pragma once

// MemoryAllocator: a bump allocator over a caller-owned buffer. It never
// frees individual allocations; reset() releases everything at once. Not
// thread-safe: one allocator serves one method at a time.

#include <cstddef>
#include <cstdint>
#include <new>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

class MemoryAllocator {
 public:
  static constexpr size_t kDefaultAlignment = alignof(void*);

  MemoryAllocator(uint32_t size, uint8_t* base_address)
      : begin_(base_address), end_(base_address + size), cur_(base_address) {}
  virtual ~MemoryAllocator() = default;

  // Returns `size` bytes aligned to `alignment` (a power of two), or nullptr
  // when the buffer is exhausted or the alignment is invalid.
  virtual void* allocate(size_t size, size_t alignment = kDefaultAlignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
      ET_LOG(Error, "Alignment %zu is not a power of two", alignment);
      return nullptr;
    }
    const uintptr_t start = reinterpret_cast<uintptr_t>(cur_);
    const uintptr_t aligned = (start + alignment - 1) & ~(alignment - 1);
    const uintptr_t limit = reinterpret_cast<uintptr_t>(end_);
    if (aligned < start || aligned > limit || size > limit - aligned) {
      ET_LOG(Error,
             "Memory allocator out of space: %zu bytes requested, %zu free",
             size,
             static_cast<size_t>(limit - start));
      return nullptr;
    }
    cur_ = reinterpret_cast<uint8_t*>(aligned + size);
    return reinterpret_cast<void*>(aligned);
  }

  // Space for `count` objects of type T, uninitialized.
  template <typename T>
  T* allocateList(size_t count, size_t alignment = alignof(T)) {
    if (count > SIZE_MAX / sizeof(T)) {
      return nullptr;
    }
    return static_cast<T*>(allocate(count * sizeof(T), alignment));
  }

  template <typename T>
  T* allocateInstance(size_t alignment = alignof(T)) {
    return static_cast<T*>(allocate(sizeof(T), alignment));
  }

  virtual void reset() {
    cur_ = begin_;
  }

  uint32_t size() const {
    return static_cast<uint32_t>(end_ - begin_);
  }
  // Bytes handed out so far (alignment padding included).
  size_t used_size() const {
    return static_cast<size_t>(cur_ - begin_);
  }
  uint8_t* base_address() const {
    return begin_;
  }

 private:
  uint8_t* const begin_;
  uint8_t* const end_;
  uint8_t* cur_;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::MemoryAllocator;
} // namespace executor
} // namespace torch
