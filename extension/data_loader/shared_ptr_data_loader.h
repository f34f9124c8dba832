#pragma once

// SharedPtrDataLoader: a DataLoader over bytes held by a std::shared_ptr, so
// the loader keeps them alive (unlike BufferDataLoader, whose caller must).
// Loads are views into those bytes. Safe to share between threads: it never
// writes.

#include <cstddef>
#include <memory>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/data_loader.h>

namespace executorch {
namespace extension {

class SharedPtrDataLoader final : public ::executorch::runtime::DataLoader {
 public:
  SharedPtrDataLoader(std::shared_ptr<void> data, size_t size)
      : data_(std::move(data)), view_(data_.get(), size) {}

  ET_NODISCARD ::executorch::runtime::Result<
      ::executorch::runtime::FreeableBuffer>
  load(size_t offset,
       size_t size,
       const SegmentInfo& segment_info) const override {
    return view_.load(offset, size, segment_info);
  }

  ET_NODISCARD ::executorch::runtime::Error load_into(
      size_t offset,
      size_t size,
      const SegmentInfo& segment_info,
      void* buffer) const override {
    return view_.load_into(offset, size, segment_info, buffer);
  }

  ET_NODISCARD ::executorch::runtime::Result<size_t> size() const override {
    return view_.size();
  }

 private:
  std::shared_ptr<void> data_;
  // Range checks and views, over the bytes data_ keeps alive.
  BufferDataLoader view_;
};

} // namespace extension
} // namespace executorch

namespace torch {
namespace executor {
namespace util {
using ::executorch::extension::SharedPtrDataLoader;
} // namespace util
} // namespace executor
} // namespace torch
