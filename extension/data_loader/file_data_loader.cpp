#include <executorch/extension/data_loader/file_data_loader.h>

#include <cstdint>
#include <cstdlib>

#include <executorch/extension/data_loader/loader_util.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {

namespace {

constexpr const char* kLoader = "FileDataLoader";

bool is_power_of_two(size_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

// FreeableBuffer hands back the aligned pointer; the allocation itself
// started at `context`.
void free_aligned(void* context, void*, size_t) {
  std::free(context);
}

} // namespace

Result<FileDataLoader> FileDataLoader::from(const char* file_name,
                                            size_t alignment) {
  ET_CHECK_OR_RETURN_ERROR(is_power_of_two(alignment),
                           InvalidArgument,
                           "%s: alignment %zu for '%s' is not a power of two",
                           kLoader,
                           alignment,
                           file_name == nullptr ? "(null)" : file_name);
  Result<internal::OpenedFile> file = internal::open_file(kLoader, file_name);
  if (!file.ok()) {
    return file.error();
  }
  return FileDataLoader(file->fd, file->size, alignment, file->name);
}

FileDataLoader::FileDataLoader(FileDataLoader&& other) noexcept
    : fd_(other.fd_),
      file_size_(other.file_size_),
      alignment_(other.alignment_),
      file_name_(other.file_name_) {
  other.fd_ = -1;
  other.file_name_ = nullptr;
}

FileDataLoader::~FileDataLoader() {
  internal::close_file(fd_, file_name_);
}

Result<FreeableBuffer> FileDataLoader::load(
    size_t offset, size_t size, const SegmentInfo& segment_info) const {
  ET_CHECK_OK_OR_RETURN_ERROR(
      internal::check_range(kLoader, file_name_, offset, size, file_size_));
  if (size == 0) {
    return FreeableBuffer(nullptr, 0, nullptr);
  }
  // Over-allocate so that an aligned start exists inside the block.
  ET_CHECK_OR_RETURN_ERROR(size <= SIZE_MAX - alignment_,
                           MemoryAllocationFailed,
                           "%s: %zu bytes from '%s' is too large",
                           kLoader,
                           size,
                           file_name_);
  void* block = std::malloc(size + alignment_ - 1);
  ET_CHECK_OR_RETURN_ERROR(block != nullptr,
                           MemoryAllocationFailed,
                           "%s: cannot allocate %zu bytes for '%s'",
                           kLoader,
                           size,
                           file_name_);
  const uintptr_t start = reinterpret_cast<uintptr_t>(block);
  void* aligned = reinterpret_cast<void*>((start + alignment_ - 1) &
                                          ~(uintptr_t)(alignment_ - 1));
  const Error read = load_into(offset, size, segment_info, aligned);
  if (read != Error::Ok) {
    std::free(block);
    return read;
  }
  return FreeableBuffer(aligned, size, free_aligned, block);
}

Error FileDataLoader::load_into(size_t offset,
                                size_t size,
                                const SegmentInfo&,
                                void* buffer) const {
  return internal::read_range(
      kLoader, fd_, file_name_, file_size_, offset, size, buffer);
}

Result<size_t> FileDataLoader::size() const {
  return file_size_;
}

} // namespace extension
} // namespace executorch
