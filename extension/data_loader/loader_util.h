#pragma once

// Helpers shared by the data loaders in this directory; not a public API.

#include <cstddef>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/result.h>

namespace executorch {
namespace extension {
namespace internal {

// Checks that [offset, offset + size) lies inside `total` bytes; otherwise
// logs which loader, source, range and actual size, and returns
// InvalidArgument.
ET_NODISCARD ::executorch::runtime::Error check_range(const char* loader,
                                                      const char* source,
                                                      size_t offset,
                                                      size_t size,
                                                      size_t total);

inline bool is_power_of_two(size_t value) {
  return value != 0 && (value & (value - 1)) == 0;
}

// A file opened read-only, with its size and a heap copy of its name (which
// the caller frees with std::free).
struct OpenedFile {
  int fd;
  size_t size;
  char* name;
};

// Opens `file_name` for reading; logs the reason (with the loader's name) on
// failure: NotFound when the file does not exist, AccessFailed otherwise.
ET_NODISCARD ::executorch::runtime::Result<OpenedFile> open_file(
    const char* loader, const char* file_name);

// Takes ownership of the descriptor `fd` (already open for reading), known
// as `name` in messages. AccessFailed when it is not open, or (after closing
// it) when it is not a regular file.
ET_NODISCARD ::executorch::runtime::Result<OpenedFile> adopt_file(
    const char* loader, int fd, const char* name);

// Reads [offset, offset + size) of the file open as `fd` into a new heap
// buffer that starts at a multiple of `alignment` (a power of two); the
// returned FreeableBuffer frees it.
ET_NODISCARD ::executorch::runtime::Result<
    ::executorch::runtime::FreeableBuffer>
read_aligned(const char* loader,
             int fd,
             const char* file_name,
             size_t file_size,
             size_t offset,
             size_t size,
             size_t alignment);

// Reads [offset, offset + size) of the file open as `fd` (of `file_size`
// bytes, named `file_name` in messages) into `buffer`, after checking the
// range. AccessFailed if the read fails or the file shrank.
ET_NODISCARD ::executorch::runtime::Error read_range(const char* loader,
                                                     int fd,
                                                     const char* file_name,
                                                     size_t file_size,
                                                     size_t offset,
                                                     size_t size,
                                                     void* buffer);

// Closes the descriptor and frees the name of a file from open_file().
void close_file(int fd, char* name);

} // namespace internal
} // namespace extension
} // namespace executorch
