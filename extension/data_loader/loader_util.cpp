#include <executorch/extension/data_loader/loader_util.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
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
  return adopt_file(loader, fd, file_name);
}

Result<OpenedFile> adopt_file(const char* loader, int fd, const char* name) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ET_LOG(Error,
           "%s: '%s' is not an open file: %s",
           loader,
           name,
           std::strerror(errno));
    return Error::AccessFailed;
  }
  if (!S_ISREG(st.st_mode)) {
    ET_LOG(Error, "%s: '%s' is not a regular file", loader, name);
    ::close(fd);
    return Error::AccessFailed;
  }
  char* owned_name = ::strdup(name);
  if (owned_name == nullptr) {
    ::close(fd);
    return Error::MemoryAllocationFailed;
  }
  return OpenedFile{fd, static_cast<size_t>(st.st_size), owned_name};
}

namespace {

// FreeableBuffer hands back the aligned pointer; the allocation itself
// started at `context`.
void free_aligned(void* context, void*, size_t) {
  std::free(context);
}

} // namespace

Result<FreeableBuffer> read_aligned(const char* loader,
                                    int fd,
                                    const char* file_name,
                                    size_t file_size,
                                    size_t offset,
                                    size_t size,
                                    size_t alignment) {
  ET_CHECK_OK_OR_RETURN_ERROR(
      check_range(loader, file_name, offset, size, file_size));
  if (size == 0) {
    return FreeableBuffer(nullptr, 0, nullptr);
  }
  // Over-allocate so that an aligned start exists inside the block.
  ET_CHECK_OR_RETURN_ERROR(size <= SIZE_MAX - alignment,
                           MemoryAllocationFailed,
                           "%s: %zu bytes from '%s' is too large",
                           loader,
                           size,
                           file_name);
  void* block = std::malloc(size + alignment - 1);
  ET_CHECK_OR_RETURN_ERROR(block != nullptr,
                           MemoryAllocationFailed,
                           "%s: cannot allocate %zu bytes for '%s'",
                           loader,
                           size,
                           file_name);
  const uintptr_t start = reinterpret_cast<uintptr_t>(block);
  void* aligned = reinterpret_cast<void*>((start + alignment - 1) &
                                          ~(uintptr_t)(alignment - 1));
  const Error read =
      read_range(loader, fd, file_name, file_size, offset, size, aligned);
  if (read != Error::Ok) {
    std::free(block);
    return read;
  }
  return FreeableBuffer(aligned, size, free_aligned, block);
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
