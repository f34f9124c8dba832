#include <executorch/runtime/core/data_loader.h>

#include <cstring>

namespace executorch {
namespace runtime {

Error DataLoader::load_into(size_t offset,
                            size_t size,
                            const SegmentInfo& segment_info,
                            void* buffer) const {
  ET_CHECK_OR_RETURN_ERROR(
      buffer != nullptr, InvalidArgument, "load_into: null destination buffer");
  Result<FreeableBuffer> data = load(offset, size, segment_info);
  if (!data.ok()) {
    return data.error();
  }
  std::memcpy(buffer, data->data(), size);
  return Error::Ok;
}

} // namespace runtime
} // namespace executorch
