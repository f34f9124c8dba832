#include <executorch/extension/data_loader/mmap_data_loader.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include <executorch/extension/data_loader/loader_util.h>

using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;

namespace executorch {
namespace extension {

namespace {

constexpr const char* kLoader = "MmapDataLoader";

// `context` carries the page size; the mapping starts at the page holding
// `data` and runs to its end.
void unmap(void* context, void* data, size_t size) {
  const uintptr_t page_size = reinterpret_cast<uintptr_t>(context);
  const uintptr_t start = reinterpret_cast<uintptr_t>(data);
  const uintptr_t base = start & ~(page_size - 1);
  ::munmap(reinterpret_cast<void*>(base), size + (start - base));
}

} // namespace

Result<MmapDataLoader> MmapDataLoader::from(const char* file_name,
                                            MlockConfig mlock_config) {
  const long page_size = ::sysconf(_SC_PAGESIZE);
  ET_CHECK_OR_RETURN_ERROR(page_size > 0 && (page_size & (page_size - 1)) == 0,
                           NotSupported,
                           "%s: unusable page size %ld",
                           kLoader,
                           page_size);
  Result<internal::OpenedFile> file = internal::open_file(kLoader, file_name);
  if (!file.ok()) {
    return file.error();
  }
  return MmapDataLoader(file->fd,
                        file->size,
                        static_cast<size_t>(page_size),
                        mlock_config,
                        file->name);
}

MmapDataLoader::MmapDataLoader(MmapDataLoader&& other) noexcept
    : fd_(other.fd_),
      file_size_(other.file_size_),
      page_size_(other.page_size_),
      mlock_config_(other.mlock_config_),
      file_name_(other.file_name_) {
  other.fd_ = -1;
  other.file_name_ = nullptr;
}

MmapDataLoader::~MmapDataLoader() {
  internal::close_file(fd_, file_name_);
}

Result<FreeableBuffer> MmapDataLoader::load(size_t offset,
                                            size_t size,
                                            const SegmentInfo&) const {
  ET_CHECK_OK_OR_RETURN_ERROR(
      internal::check_range(kLoader, file_name_, offset, size, file_size_));
  if (size == 0) {
    return FreeableBuffer(nullptr, 0, nullptr);
  }
  // mmap offsets must be page-aligned: map from the page holding `offset`.
  const size_t map_offset = offset & ~(page_size_ - 1);
  const size_t map_size = size + (offset - map_offset);
  void* mapped = ::mmap(nullptr,
                        map_size,
                        PROT_READ,
                        MAP_PRIVATE,
                        fd_,
                        static_cast<off_t>(map_offset));
  ET_CHECK_OR_RETURN_ERROR(mapped != MAP_FAILED,
                           AccessFailed,
                           "%s: mapping %zu bytes at offset %zu of '%s' "
                           "failed: %s",
                           kLoader,
                           size,
                           offset,
                           file_name_,
                           std::strerror(errno));
  if (mlock_config_ != MlockConfig::NoMlock && ::mlock(mapped, map_size) != 0) {
    if (mlock_config_ == MlockConfig::UseMlock) {
      ET_LOG(Error,
             "%s: locking %zu bytes of '%s' in memory failed: %s",
             kLoader,
             map_size,
             file_name_,
             std::strerror(errno));
      ::munmap(mapped, map_size);
      return Error::AccessFailed;
    }
  }
  return FreeableBuffer(static_cast<uint8_t*>(mapped) + (offset - map_offset),
                        size,
                        unmap,
                        reinterpret_cast<void*>(page_size_));
}

Error MmapDataLoader::load_into(size_t offset,
                                size_t size,
                                const SegmentInfo&,
                                void* buffer) const {
  return internal::read_range(
      kLoader, fd_, file_name_, file_size_, offset, size, buffer);
}

Result<size_t> MmapDataLoader::size() const {
  return file_size_;
}

} // namespace extension
} // namespace executorch
