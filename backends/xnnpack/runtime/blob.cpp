#include <executorch/backends/xnnpack/runtime/blob.h>

#include <cstring>

#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;
using runtime::Result;

namespace {

uint64_t read_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) {
    v = (v << 8) | p[i];
  }
  return v;
}

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}

// True when [offset, offset + size) lies in [begin, end); no overflow.
bool range_in(uint64_t offset, uint64_t size, uint64_t begin, uint64_t end) {
  return offset >= begin && offset <= end && size <= end - offset;
}

} // namespace

Result<BlobView> parse_blob(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  ET_CHECK_OR_RETURN_ERROR(bytes != nullptr && size >= kBlobHeaderSize,
                           InvalidProgram,
                           "XNNPACK blob: %zu bytes, shorter than the %zu-byte "
                           "header",
                           size,
                           kBlobHeaderSize);
  // Upstream ExecuTorch's XNNPACK blobs carry "XH00" (header) or "XN01"
  // (flatbuffer identifier) at byte 4; name the mix-up instead of a bad
  // magic.
  ET_CHECK_OR_RETURN_ERROR(
      std::memcmp(bytes + 4, "XH00", 4) != 0 &&
          std::memcmp(bytes + 4, "XN01", 4) != 0,
      NotSupported,
      "XNNPACK blob: made by upstream ExecuTorch's XNNPACK delegate, whose "
      "format this backend does not read; export the model with this SDK's "
      "XnnpackPartitioner");
  ET_CHECK_OR_RETURN_ERROR(
      std::memcmp(bytes, kBlobMagic, sizeof(kBlobMagic)) == 0,
      InvalidProgram,
      "XNNPACK blob: bad magic %02x%02x%02x%02x, expected 'XNB1'",
      bytes[0],
      bytes[1],
      bytes[2],
      bytes[3]);
  const uint32_t header_size = read_u32(bytes + 4);
  const uint64_t fb_offset = read_u64(bytes + 8);
  const uint64_t fb_size = read_u64(bytes + 16);
  const uint64_t const_offset = read_u64(bytes + 24);
  const uint64_t const_size = read_u64(bytes + 32);
  ET_CHECK_OR_RETURN_ERROR(
      header_size >= kBlobHeaderSize && header_size <= size,
      InvalidProgram,
      "XNNPACK blob: header size %u outside [%zu, %zu]",
      header_size,
      kBlobHeaderSize,
      size);
  ET_CHECK_OR_RETURN_ERROR(
      range_in(fb_offset, fb_size, header_size, size),
      InvalidProgram,
      "XNNPACK blob: flatbuffer [offset %llu, size %llu] outside the %zu-byte "
      "blob",
      static_cast<unsigned long long>(fb_offset),
      static_cast<unsigned long long>(fb_size),
      size);
  ET_CHECK_OR_RETURN_ERROR(
      range_in(const_offset, const_size, header_size, size),
      InvalidProgram,
      "XNNPACK blob: constant data [offset %llu, size %llu] outside the "
      "%zu-byte blob",
      static_cast<unsigned long long>(const_offset),
      static_cast<unsigned long long>(const_size),
      size);
  // Flatbuffer accessors read scalars in place, so the table data must be
  // aligned like the largest scalar in the schema.
  const uint8_t* fb = bytes + fb_offset;
  ET_CHECK_OR_RETURN_ERROR(
      reinterpret_cast<uintptr_t>(fb) % alignof(uint64_t) == 0,
      InvalidProgram,
      "XNNPACK blob: flatbuffer at offset %llu is not 8-byte aligned in memory",
      static_cast<unsigned long long>(fb_offset));
  ET_CHECK_OR_RETURN_ERROR(
      fb_size >= 8 && xnnpack_graph::GraphBufferHasIdentifier(fb),
      InvalidProgram,
      "XNNPACK blob: flatbuffer identifier is not '%s'",
      xnnpack_graph::GraphIdentifier());
  flatbuffers::Verifier verifier(fb, fb_size);
  ET_CHECK_OR_RETURN_ERROR(xnnpack_graph::VerifyGraphBuffer(verifier),
                           InvalidProgram,
                           "XNNPACK blob: the graph flatbuffer failed "
                           "verification");
  BlobView view;
  view.graph = xnnpack_graph::GetGraph(fb);
  view.constant_data = bytes + const_offset;
  view.constant_data_size = const_size;
  view.bytes_after_constant_data = size - (const_offset + const_size);
  return view;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
