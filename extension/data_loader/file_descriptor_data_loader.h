#pragma once

// FileDescriptorDataLoader: FileDataLoader's behaviour for a file the app
// already opened, named by a URI "fd:///<number>" (Android hands models to
// apps as descriptors of assets). The loader takes ownership of the
// descriptor and closes it when destroyed. Reads use pread(), so one loader
// may serve several threads.

#include <cstddef>

#include <executorch/runtime/core/data_loader.h>

namespace executorch {
namespace extension {

class FileDescriptorDataLoader final
    : public ::executorch::runtime::DataLoader {
 public:
  // Adopts the descriptor named by `file_descriptor_uri` ("fd:///3"). Every
  // buffer load() returns starts at a multiple of `alignment`, a power of
  // two. InvalidArgument for a malformed URI or alignment (the descriptor
  // stays the caller's); AccessFailed when the descriptor is not open, or is
  // not a regular file (then it is closed).
  ET_NODISCARD static ::executorch::runtime::Result<FileDescriptorDataLoader>
  fromFileDescriptorUri(const char* file_descriptor_uri,
                        size_t alignment = alignof(std::max_align_t));

  FileDescriptorDataLoader(FileDescriptorDataLoader&& other) noexcept;
  FileDescriptorDataLoader(const FileDescriptorDataLoader&) = delete;
  FileDescriptorDataLoader& operator=(const FileDescriptorDataLoader&) = delete;
  FileDescriptorDataLoader& operator=(FileDescriptorDataLoader&&) = delete;
  ~FileDescriptorDataLoader() override;

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
  FileDescriptorDataLoader(int fd,
                           size_t file_size,
                           size_t alignment,
                           char* uri)
      : fd_(fd), file_size_(file_size), alignment_(alignment), uri_(uri) {}

  int fd_;
  size_t file_size_;
  size_t alignment_;
  // Owned copy of the URI, for error messages.
  char* uri_;
};

} // namespace extension
} // namespace executorch

namespace torch {
namespace executor {
namespace util {
using ::executorch::extension::FileDescriptorDataLoader;
} // namespace util
} // namespace executor
} // namespace torch
