#pragma once

// FileDataLoader: reads ranges of a file with pread() into heap buffers
// aligned to a caller-chosen boundary, so constant tensors loaded from the
// file can be used in place by kernels that need aligned data. Each load
// allocates; the returned FreeableBuffer frees. pread() has no shared file
// position, so one loader may serve several threads.

#include <cstddef>

#include <executorch/runtime/core/data_loader.h>

namespace executorch {
namespace extension {

class FileDataLoader final : public ::executorch::runtime::DataLoader {
 public:
  // Opens `file_name`. Every buffer load() returns starts at a multiple of
  // `alignment`, which must be a power of two.
  ET_NODISCARD static ::executorch::runtime::Result<FileDataLoader> from(
      const char* file_name, size_t alignment = alignof(std::max_align_t));

  FileDataLoader(FileDataLoader&& other) noexcept;
  FileDataLoader(const FileDataLoader&) = delete;
  FileDataLoader& operator=(const FileDataLoader&) = delete;
  FileDataLoader& operator=(FileDataLoader&&) = delete;
  ~FileDataLoader() override;

  ET_NODISCARD ::executorch::runtime::Result<
      ::executorch::runtime::FreeableBuffer>
  load(size_t offset,
       size_t size,
       const SegmentInfo& segment_info) const override;

  // Reads straight into `buffer`, with no intermediate allocation.
  ET_NODISCARD ::executorch::runtime::Error load_into(
      size_t offset,
      size_t size,
      const SegmentInfo& segment_info,
      void* buffer) const override;

  ET_NODISCARD ::executorch::runtime::Result<size_t> size() const override;

 private:
  FileDataLoader(int fd, size_t file_size, size_t alignment, char* file_name)
      : fd_(fd),
        file_size_(file_size),
        alignment_(alignment),
        file_name_(file_name) {}

  int fd_;
  size_t file_size_;
  size_t alignment_;
  // Owned copy, for error messages.
  char* file_name_;
};

} // namespace extension
} // namespace executorch

namespace torch {
namespace executor {
namespace util {
using ::executorch::extension::FileDataLoader;
} // namespace util
} // namespace executor
} // namespace torch
