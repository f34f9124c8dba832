#pragma once

// FreeableBuffer: read-only bytes plus an optional function that releases
// them. Move-only; the destructor frees.

#include <cstddef>

namespace executorch {
namespace runtime {

class FreeableBuffer final {
 public:
  using FreeFn = void (*)(void* context, void* data, size_t size);

  FreeableBuffer() = default;
  FreeableBuffer(const void* data,
                 size_t size,
                 FreeFn free_fn,
                 void* free_fn_context = nullptr)
      : data_(data),
        size_(size),
        free_fn_(free_fn),
        context_(free_fn_context) {}

  FreeableBuffer(FreeableBuffer&& other) noexcept
      : data_(other.data_),
        size_(other.size_),
        free_fn_(other.free_fn_),
        context_(other.context_) {
    other.release_ownership();
  }
  FreeableBuffer& operator=(FreeableBuffer&& other) noexcept {
    if (this != &other) {
      Free();
      data_ = other.data_;
      size_ = other.size_;
      free_fn_ = other.free_fn_;
      context_ = other.context_;
      other.release_ownership();
    }
    return *this;
  }
  FreeableBuffer(const FreeableBuffer&) = delete;
  FreeableBuffer& operator=(const FreeableBuffer&) = delete;

  ~FreeableBuffer() {
    Free();
  }

  void Free() {
    if (data_ != nullptr && free_fn_ != nullptr) {
      free_fn_(context_, const_cast<void*>(data_), size_);
    }
    release_ownership();
  }

  size_t size() const {
    return size_;
  }
  const void* data() const {
    return data_;
  }

 private:
  void release_ownership() {
    data_ = nullptr;
    size_ = 0;
    free_fn_ = nullptr;
    context_ = nullptr;
  }

  const void* data_ = nullptr;
  size_t size_ = 0;
  FreeFn free_fn_ = nullptr;
  void* context_ = nullptr;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::FreeableBuffer;
} // namespace executor
} // namespace torch
