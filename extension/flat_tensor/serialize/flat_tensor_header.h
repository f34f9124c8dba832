#pragma once

// The "FH01" header of a .ptd file, after the flatbuffer's root offset and
// file identifier (at byte 8). It says how many bytes the flatbuffer takes
// and where the data segments start. All fields are little-endian.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/result.h>

namespace executorch {
namespace extension {

struct FlatTensorHeader {
  // Where the header starts in the file.
  static constexpr size_t kHeaderOffset = 8;
  static constexpr char kMagic[4] = {'F', 'H', '0', '1'};
  // magic + length + four uint64 fields.
  static constexpr uint32_t kMinimumLength = 40;
  // Bytes to read from the start of the file to parse the header.
  static constexpr size_t kNumHeadBytes = kHeaderOffset + kMinimumLength;

  // Reads the header from the first `size` bytes of a file. NotFound when
  // the magic is absent; InvalidExternalData when it is present but the
  // header is truncated or its fields contradict each other.
  static ::executorch::runtime::Result<FlatTensorHeader> Parse(const void* data,
                                                               size_t size);

  // The flatbuffer (with this header inside it) spans the file's bytes
  // [0, flatbuffer_offset + flatbuffer_size).
  uint64_t flatbuffer_offset = 0;
  uint64_t flatbuffer_size = 0;
  // File offset of the first segment.
  uint64_t segment_base_offset = 0;
  // Bytes of segment data after segment_base_offset.
  uint64_t segment_data_size = 0;
};

} // namespace extension
} // namespace executorch
