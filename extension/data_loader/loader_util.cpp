#include <executorch/extension/data_loader/loader_util.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {
namespace internal {

Error check_range(const char* loader,
                  const char* source,
                  size_t offset,
                  size_t size,
                  size_t total) {
  // Written so that offset + size cannot overflow.
  ET_CHECK_OR_RETURN_ERROR(
      offset <= total && size <= total - offset,
      InvalidArgument,
      "%s: cannot load %zu bytes at offset %zu from '%s': it has %zu bytes",
      loader,
      size,
      offset,
      source,
      total);
  return Error::Ok;
}

Result<OpenedFile> open_file(const char* loader, const char* file_name) {
  ET_CHECK_OR_RETURN_ERROR(
      file_name != nullptr, InvalidArgument, "%s: null file name", loader);
  const int fd = ::open(file_name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int open_errno = errno;
    ET_LOG(Error,
           "%s: cannot open '%s': %s",
           loader,
           file_name,
           std::strerror(open_errno));
    return open_errno == ENOENT ? Error::NotFound : Error::AccessFailed;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ET_LOG(Error, "%s: '%s' is not a regular file", loader, file_name);
    ::close(fd);
    return Error::AccessFailed;
  }
  char* name = ::strdup(file_name);
  if (name == nullptr) {
    ::close(fd);
    return Error::MemoryAllocationFailed;
  }
  return OpenedFile{fd, static_cast<size_t>(st.st_size), name};
}

Error read_range(const char* loader,
                 int fd,
                 const char* file_name,
                 size_t file_size,
                 size_t offset,
                 size_t size,
                 void* buffer) {
  ET_CHECK_OK_OR_RETURN_ERROR(
      check_range(loader, file_name, offset, size, file_size));
  ET_CHECK_OR_RETURN_ERROR(buffer != nullptr || size == 0,
                           InvalidArgument,
                           "%s: null destination buffer",
                           loader);
  uint8_t* out = static_cast<uint8_t*>(buffer);
  size_t done = 0;
  // pread may return fewer bytes than asked (signals, large requests).
  while (done < size) {
    const ssize_t n =
        ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      ET_LOG(Error,
             "%s: reading %zu bytes at offset %zu from '%s' failed after %zu "
             "bytes: %s",
             loader,
             size,
             offset,
             file_name,
             done,
             n == 0 ? "unexpected end of file" : std::strerror(errno));
      return Error::AccessFailed;
    }
    done += static_cast<size_t>(n);
  }
  return Error::Ok;
}

void close_file(int fd, char* name) {
  if (fd >= 0) {
    ::close(fd);
  }
  std::free(name);
}

} // namespace internal
} // namespace extension
} // namespace executorch
