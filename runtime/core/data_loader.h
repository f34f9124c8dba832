#pragma once

// DataLoader: where a Program's bytes come from (a file, an mmap, a buffer).
// Implementations must be safe to call from several threads when a Program
// is shared.

#include <cstddef>

#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/result.h>

namespace executorch {
namespace runtime {

class DataLoader {
 public:
  // Why a load is made, so a loader can choose where to place the data.
  struct SegmentInfo {
    enum class Type {
      Program,
      Constant,
      Backend,
      Mutable,
      External,
    };

    SegmentInfo() = default;
    explicit SegmentInfo(Type segment_type,
                         size_t segment_index = 0,
                         const char* descriptor = nullptr)
        : segment_type(segment_type),
          segment_index(segment_index),
          descriptor(descriptor) {}

    Type segment_type = Type::Program;
    size_t segment_index = 0;
    const char* descriptor = nullptr;
  };

  virtual ~DataLoader() = default;

  // Returns `size` bytes starting at `offset`. Fails with InvalidArgument if
  // the range is outside the data.
  ET_NODISCARD virtual Result<FreeableBuffer> load(
      size_t offset, size_t size, const SegmentInfo& segment_info) const = 0;

  // Copies `size` bytes at `offset` into `buffer`. The default loads then
  // copies; loaders that can read in place override it.
  ET_NODISCARD virtual Error load_into(size_t offset,
                                       size_t size,
                                       const SegmentInfo& segment_info,
                                       void* buffer) const;

  // Total bytes available.
  ET_NODISCARD virtual Result<size_t> size() const = 0;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::DataLoader;
} // namespace executor
} // namespace torch
