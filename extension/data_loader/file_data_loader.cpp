#include <executorch/extension/data_loader/file_data_loader.h>

#include <executorch/extension/data_loader/loader_util.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {

namespace {

constexpr const char* kLoader = "FileDataLoader";

} // namespace

Result<FileDataLoader> FileDataLoader::from(const char* file_name,
                                            size_t alignment) {
  ET_CHECK_OR_RETURN_ERROR(internal::is_power_of_two(alignment),
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

Result<FreeableBuffer> FileDataLoader::load(size_t offset,
                                            size_t size,
                                            const SegmentInfo&) const {
  return internal::read_aligned(
      kLoader, fd_, file_name_, file_size_, offset, size, alignment_);
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
