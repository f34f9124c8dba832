#include <executorch/schema/extended_header.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

namespace {

// Reads little-endian integers byte by byte so host endianness and
// alignment do not matter.
uint64_t read_le(const uint8_t* bytes, size_t count) {
  uint64_t value = 0;
  for (size_t i = 0; i < count; ++i) {
    value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  }
  return value;
}

} // namespace

constexpr char ExtendedHeader::kMagic[4];

Result<ExtendedHeader> ExtendedHeader::Parse(const void* data, size_t size) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  if (data == nullptr || size < kHeaderOffset + sizeof(kMagic) ||
      std::memcmp(bytes + kHeaderOffset, kMagic, sizeof(kMagic)) != 0) {
    return Error::NotFound;
  }
  const uint8_t* header = bytes + kHeaderOffset;
  const size_t available = size - kHeaderOffset;
  ET_CHECK_OR_RETURN_ERROR(available >= kMinimumLength,
                           InvalidProgram,
                           "Extended header truncated: %zu bytes, need %u",
                           available,
                           kMinimumLength);
  const uint32_t length = static_cast<uint32_t>(read_le(header + 4, 4));
  ET_CHECK_OR_RETURN_ERROR(length >= kMinimumLength,
                           InvalidProgram,
                           "Extended header length %u is below the minimum %u",
                           length,
                           kMinimumLength);
  ET_CHECK_OR_RETURN_ERROR(
      length <= available,
      InvalidProgram,
      "Extended header length %u exceeds the %zu bytes provided",
      length,
      available);
  ExtendedHeader result;
  result.program_size = read_le(header + 8, 8);
  result.segment_base_offset = read_le(header + 16, 8);
  if (length >= kCurrentLength) {
    result.segment_data_size = read_le(header + 24, 8);
  }
  ET_CHECK_OR_RETURN_ERROR(
      result.program_size >= kHeaderOffset + length,
      InvalidProgram,
      "Extended header program_size %llu is smaller than the header itself",
      static_cast<unsigned long long>(result.program_size));
  ET_CHECK_OR_RETURN_ERROR(
      result.segment_base_offset == 0 ||
          result.segment_base_offset >= result.program_size,
      InvalidProgram,
      "Extended header segment_base_offset %llu overlaps the program data "
      "(program_size %llu)",
      static_cast<unsigned long long>(result.segment_base_offset),
      static_cast<unsigned long long>(result.program_size));
  return result;
}

} // namespace runtime
} // namespace executorch
