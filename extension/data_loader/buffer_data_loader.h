#pragma once

// BufferDataLoader: a DataLoader over bytes the caller already holds in
// memory (an embedded array, a buffer received over the network). Loads are
// views into that memory, which must outlive the loader and everything loaded
// through it. Safe to share between threads: it never writes.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/data_loader.h>

namespace executorch {
namespace extension {

class BufferDataLoader final : public ::executorch::runtime::DataLoader {
 public:
  BufferDataLoader(const void* data, size_t size)
      : data_(static_cast<const uint8_t*>(data)), size_(size) {}
  ~BufferDataLoader() override;

  ET_NODISCARD ::executorch::runtime::Result<
      ::executorch::runtime::FreeableBuffer>
  load(size_t offset,
       size_t size,
       const SegmentInfo& segment_info) const override;

  ET_NODISCARD ::executorch::runtime::Error load_into(
      size_t offset,
      size_t size,
      const SegmentInfo& segment_info,
      void* buffer) const override;

  ET_NODISCARD ::executorch::runtime::Result<size_t> size() const override;

 private:
  const uint8_t* const data_;
  const size_t size_;
};

} // namespace extension
} // namespace executorch

namespace torch {
namespace executor {
namespace util {
using ::executorch::extension::BufferDataLoader;
} // namespace util
} // namespace executor
} // namespace torch
