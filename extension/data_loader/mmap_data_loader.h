#pragma once

// MmapDataLoader: maps ranges of a file read-only into memory instead of
// copying them, so a large program costs only the pages a method touches.
// Each load() maps its own page-aligned range and the returned
// FreeableBuffer unmaps it. Safe to share between threads.

#include <cstddef>

#include <executorch/runtime/core/data_loader.h>

namespace executorch {
namespace extension {

class MmapDataLoader final : public ::executorch::runtime::DataLoader {
 public:
  // Whether loaded pages are locked in RAM (so running a method never waits
  // on a page fault from disk).
  enum class MlockConfig {
    NoMlock,
    // Lock, and fail the load if locking fails.
    UseMlock,
    // Lock when the system allows it (RLIMIT_MEMLOCK is often small in
    // containers); otherwise keep the mapping unlocked.
    UseMlockIgnoreErrors,
  };

  ET_NODISCARD static ::executorch::runtime::Result<MmapDataLoader> from(
      const char* file_name, MlockConfig mlock_config = MlockConfig::UseMlock);

  MmapDataLoader(MmapDataLoader&& other) noexcept;
  MmapDataLoader(const MmapDataLoader&) = delete;
  MmapDataLoader& operator=(const MmapDataLoader&) = delete;
  MmapDataLoader& operator=(MmapDataLoader&&) = delete;
  ~MmapDataLoader() override;

  ET_NODISCARD ::executorch::runtime::Result<
      ::executorch::runtime::FreeableBuffer>
  load(size_t offset,
       size_t size,
       const SegmentInfo& segment_info) const override;

  // Copies with pread(): mapping a range only to copy it out would cost a
  // map and an unmap for nothing.
  ET_NODISCARD ::executorch::runtime::Error load_into(
      size_t offset,
      size_t size,
      const SegmentInfo& segment_info,
      void* buffer) const override;

  ET_NODISCARD ::executorch::runtime::Result<size_t> size() const override;

 private:
  MmapDataLoader(int fd,
                 size_t file_size,
                 size_t page_size,
                 MlockConfig mlock_config,
                 char* file_name)
      : fd_(fd),
        file_size_(file_size),
        page_size_(page_size),
        mlock_config_(mlock_config),
        file_name_(file_name) {}

  int fd_;
  size_t file_size_;
  size_t page_size_;
  MlockConfig mlock_config_;
  // Owned copy, for error messages.
  char* file_name_;
};

} // namespace extension
} // namespace executorch

namespace torch {
namespace executor {
namespace util {
using ::executorch::extension::MmapDataLoader;
} // namespace util
} // namespace executor
} // namespace torch
