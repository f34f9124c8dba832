#pragma once

// Test helper: a DataLoader over bytes in memory (the tests' stand-in for the
// extension loaders). Loads return views into the buffer.

#include <cstdint>
#include <vector>

#include <executorch/runtime/core/data_loader.h>

namespace executorch {
namespace runtime {
namespace testing {

class BufferDataLoader final : public DataLoader {
 public:
  BufferDataLoader(const void* data, size_t size)
      : data_(static_cast<const uint8_t*>(data)), size_(size) {}
  explicit BufferDataLoader(const std::vector<uint8_t>& bytes)
      : BufferDataLoader(bytes.data(), bytes.size()) {}

  Result<FreeableBuffer> load(size_t offset,
                              size_t size,
                              const SegmentInfo&) const override {
    if (offset > size_ || size > size_ - offset) {
      return Error::InvalidArgument;
    }
    return FreeableBuffer(data_ + offset, size, nullptr);
  }

  Result<size_t> size() const override {
    return size_;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

} // namespace testing
} // namespace runtime
} // namespace executorch
