#include <executorch/extension/data_loader/buffer_data_loader.h>

#include <cstring>

#include <executorch/extension/data_loader/loader_util.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {

// Defined here so the vtable is emitted in this (RTTI-free) object only.
BufferDataLoader::~BufferDataLoader() = default;

Result<FreeableBuffer> BufferDataLoader::load(size_t offset,
                                              size_t size,
                                              const SegmentInfo&) const {
  ET_CHECK_OK_OR_RETURN_ERROR(
      internal::check_range("BufferDataLoader", "buffer", offset, size, size_));
  // A view: the caller's memory stays owned by the caller.
  return FreeableBuffer(data_ + offset, size, nullptr);
}

Error BufferDataLoader::load_into(size_t offset,
                                  size_t size,
                                  const SegmentInfo&,
                                  void* buffer) const {
  ET_CHECK_OK_OR_RETURN_ERROR(
      internal::check_range("BufferDataLoader", "buffer", offset, size, size_));
  ET_CHECK_OR_RETURN_ERROR(buffer != nullptr || size == 0,
                           InvalidArgument,
                           "BufferDataLoader: null destination buffer");
  if (size > 0) {
    std::memcpy(buffer, data_ + offset, size);
  }
  return Error::Ok;
}

Result<size_t> BufferDataLoader::size() const {
  return size_;
}

} // namespace extension
} // namespace executorch
