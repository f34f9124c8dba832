#pragma once

// The optional extended header that follows the flatbuffer's root offset and
// file identifier (at byte 8 of a .pte). It tells the loader how many bytes
// the flatbuffer occupies and where the data segments begin. All fields are
// little-endian.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/result.h>

namespace executorch {
namespace runtime {

struct ExtendedHeader {
  // Where the header starts in the file.
  static constexpr size_t kHeaderOffset = 8;
  static constexpr char kMagic[4] = {'e', 'h', '0', '0'};
  // magic + length + program_size + segment_base_offset.
  static constexpr uint32_t kMinimumLength = 24;
  // kMinimumLength + segment_data_size.
  static constexpr uint32_t kCurrentLength = 32;

  // Reads the header from the first `size` bytes of a file. NotFound when
  // the magic is absent (a file without an extended header); InvalidProgram
  // when the magic is present but the header is truncated or malformed.
  static Result<ExtendedHeader> Parse(const void* data, size_t size);

  // Bytes of flatbuffer data, counted from the start of the file.
  uint64_t program_size = 0;
  // File offset of the first segment; 0 when there are no segments.
  uint64_t segment_base_offset = 0;
  // Bytes of segment data; 0 when absent or when the header predates it.
  uint64_t segment_data_size = 0;
};

} // namespace runtime
} // namespace executorch
