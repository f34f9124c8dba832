#include <executorch/extension/flat_tensor/serialize/flat_tensor_header.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {

namespace {

// Byte by byte, so host endianness and alignment do not matter.
uint64_t read_le(const uint8_t* bytes, size_t count) {
  uint64_t value = 0;
  for (size_t i = 0; i < count; ++i) {
    value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  }
  return value;
}

} // namespace

constexpr char FlatTensorHeader::kMagic[4];

::executorch::runtime::Result<FlatTensorHeader> FlatTensorHeader::Parse(
    const void* data,
    size_t size) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  if (data == nullptr || size < kHeaderOffset + sizeof(kMagic) ||
      std::memcmp(bytes + kHeaderOffset, kMagic, sizeof(kMagic)) != 0) {
    return ::executorch::runtime::Error::NotFound;
  }
  const uint8_t* header = bytes + kHeaderOffset;
  ET_CHECK_OR_RETURN_ERROR(size - kHeaderOffset >= kMinimumLength,
                           InvalidExternalData,
                           ".ptd header truncated: %zu bytes, need %u",
                           size - kHeaderOffset,
                           kMinimumLength);
  const uint32_t length = static_cast<uint32_t>(read_le(header + 4, 4));
  ET_CHECK_OR_RETURN_ERROR(length >= kMinimumLength,
                           InvalidExternalData,
                           ".ptd header length %u is below the minimum %u",
                           length,
                           kMinimumLength);
  FlatTensorHeader result;
  result.flatbuffer_offset = read_le(header + 8, 8);
  result.flatbuffer_size = read_le(header + 16, 8);
  result.segment_base_offset = read_le(header + 24, 8);
  result.segment_data_size = read_le(header + 32, 8);
  // The flatbuffer holds the header, and the segments follow the flatbuffer
  // (checked with subtraction so that huge values cannot wrap around).
  ET_CHECK_OR_RETURN_ERROR(
      result.flatbuffer_offset >= kHeaderOffset + length &&
          result.flatbuffer_size <= UINT64_MAX - result.flatbuffer_offset &&
          result.segment_base_offset >=
              result.flatbuffer_offset + result.flatbuffer_size &&
          result.segment_data_size <=
              UINT64_MAX - result.segment_base_offset,
      InvalidExternalData,
      ".ptd header fields out of order: flatbuffer_offset %llu, "
      "flatbuffer_size %llu, segment_base_offset %llu, segment_data_size "
      "%llu",
      static_cast<unsigned long long>(result.flatbuffer_offset),
      static_cast<unsigned long long>(result.flatbuffer_size),
      static_cast<unsigned long long>(result.segment_base_offset),
      static_cast<unsigned long long>(result.segment_data_size));
  return result;
}

} // namespace extension
} // namespace executorch
