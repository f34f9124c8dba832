#include <executorch/extension/data_loader/file_descriptor_data_loader.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <executorch/extension/data_loader/loader_util.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {

namespace {

constexpr const char* kLoader = "FileDescriptorDataLoader";
constexpr const char kUriPrefix[] = "fd:///";

// The descriptor number of "fd:///<number>", or -1 when the URI has another
// form (wrong prefix, no digits, trailing characters, out of int range).
int parse_fd_uri(const char* uri) {
  const size_t prefix_length = sizeof(kUriPrefix) - 1;
  if (std::strncmp(uri, kUriPrefix, prefix_length) != 0) {
    return -1;
  }
  const char* digits = uri + prefix_length;
  if (*digits < '0' || *digits > '9') {
    return -1;
  }
  char* end = nullptr;
  errno = 0;
  const long fd = std::strtol(digits, &end, 10);
  if (errno != 0 || *end != '\0' || fd > INT_MAX) {
    return -1;
  }
  return static_cast<int>(fd);
}

} // namespace

Result<FileDescriptorDataLoader>
FileDescriptorDataLoader::fromFileDescriptorUri(const char* file_descriptor_uri,
                                                size_t alignment) {
  ET_CHECK_OR_RETURN_ERROR(
      file_descriptor_uri != nullptr, InvalidArgument, "%s: null URI", kLoader);
  ET_CHECK_OR_RETURN_ERROR(internal::is_power_of_two(alignment),
                           InvalidArgument,
                           "%s: alignment %zu for '%s' is not a power of two",
                           kLoader,
                           alignment,
                           file_descriptor_uri);
  const int fd = parse_fd_uri(file_descriptor_uri);
  ET_CHECK_OR_RETURN_ERROR(fd >= 0,
                           InvalidArgument,
                           "%s: expected a URI of the form '%s<number>', got "
                           "'%s'",
                           kLoader,
                           kUriPrefix,
                           file_descriptor_uri);
  Result<internal::OpenedFile> file =
      internal::adopt_file(kLoader, fd, file_descriptor_uri);
  if (!file.ok()) {
    return file.error();
  }
  return FileDescriptorDataLoader(file->fd, file->size, alignment, file->name);
}

FileDescriptorDataLoader::FileDescriptorDataLoader(
    FileDescriptorDataLoader&& other) noexcept
    : fd_(other.fd_),
      file_size_(other.file_size_),
      alignment_(other.alignment_),
      uri_(other.uri_) {
  other.fd_ = -1;
  other.uri_ = nullptr;
}

FileDescriptorDataLoader::~FileDescriptorDataLoader() {
  internal::close_file(fd_, uri_);
}

Result<FreeableBuffer> FileDescriptorDataLoader::load(
    size_t offset, size_t size, const SegmentInfo&) const {
  return internal::read_aligned(
      kLoader, fd_, uri_, file_size_, offset, size, alignment_);
}

Error FileDescriptorDataLoader::load_into(size_t offset,
                                          size_t size,
                                          const SegmentInfo&,
                                          void* buffer) const {
  return internal::read_range(
      kLoader, fd_, uri_, file_size_, offset, size, buffer);
}

Result<size_t> FileDescriptorDataLoader::size() const {
  return file_size_;
}

} // namespace extension
} // namespace executorch
