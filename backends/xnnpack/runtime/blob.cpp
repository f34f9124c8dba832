#include <executorch/backends/xnnpack/runtime/blob.h>

#include <cstring>

#include <executorch/backends/xnnpack/schema_generated.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;
using runtime::Result;

namespace {

uint64_t read_le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) {
    v = (v << 8) | p[i];
  }
  return v;
}

// True when [offset, offset + size) lies in [begin, end), without overflow.
bool range_in(uint64_t offset, uint64_t size, uint64_t begin, uint64_t end) {
  return offset >= begin && offset <= end && size <= end - offset;
}

Result<const fb_xnnpack::XNNGraph*> verify_graph(const uint8_t* fb,
                                                 size_t size) {
  ET_CHECK_OR_RETURN_ERROR(
      reinterpret_cast<uintptr_t>(fb) % alignof(uint64_t) == 0,
      InvalidProgram,
      "XNNPACK blob: the graph flatbuffer is not 8-byte aligned in memory");
  ET_CHECK_OR_RETURN_ERROR(
      size >= 8 && (fb_xnnpack::XNNGraphBufferHasIdentifier(fb) ||
                    std::memcmp(fb + 4, "XN00", 4) == 0),
      InvalidProgram,
      "XNNPACK blob: no graph flatbuffer identifier ('XN01' or 'XN00') at "
      "byte 4 and no 'XH00' header: not an XNNPACK delegate blob");
  flatbuffers::Verifier verifier(fb, size);
  ET_CHECK_OR_RETURN_ERROR(verifier.VerifyBuffer<fb_xnnpack::XNNGraph>(nullptr),
                           InvalidProgram,
                           "XNNPACK blob: the graph flatbuffer failed "
                           "verification (a table, vector or string lies "
                           "outside the data)");
  return fb_xnnpack::GetXNNGraph(fb);
}

} // namespace

Result<BlobView> parse_blob(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  ET_CHECK_OR_RETURN_ERROR(bytes != nullptr && size >= 8,
                           InvalidProgram,
                           "XNNPACK blob: %zu bytes is too short",
                           size);
  BlobView view;
  if (std::memcmp(bytes + kHeaderMagicOffset, kHeaderMagic, 4) != 0) {
    // No header: the blob is the flatbuffer, constants inside it.
    ET_UNWRAP(view.graph, verify_graph(bytes, size));
    return view;
  }
  ET_CHECK_OR_RETURN_ERROR(size >= kHeaderSize,
                           InvalidProgram,
                           "XNNPACK blob: %zu bytes, shorter than the %zu-byte "
                           "header",
                           size,
                           kHeaderSize);
  const uint64_t header_size = read_le(bytes + 8, 2);
  const uint64_t fb_offset = read_le(bytes + 10, 4);
  const uint64_t fb_size = read_le(bytes + 14, 4);
  const uint64_t const_offset = read_le(bytes + 18, 4);
  const uint64_t const_size = read_le(bytes + 22, 8);
  ET_CHECK_OR_RETURN_ERROR(header_size >= kHeaderSize,
                           InvalidProgram,
                           "XNNPACK blob: header length %llu, expected at "
                           "least %zu",
                           static_cast<unsigned long long>(header_size),
                           kHeaderSize);
  ET_CHECK_OR_RETURN_ERROR(
      range_in(fb_offset, fb_size, header_size, size),
      InvalidProgram,
      "XNNPACK blob: flatbuffer [offset %llu, size %llu] outside the %zu-byte "
      "blob",
      static_cast<unsigned long long>(fb_offset),
      static_cast<unsigned long long>(fb_size),
      size);
  ET_CHECK_OR_RETURN_ERROR(
      range_in(const_offset, const_size, fb_offset + fb_size, size),
      InvalidProgram,
      "XNNPACK blob: constant data [offset %llu, size %llu] is not between the "
      "end of the flatbuffer (%llu) and the end of the %zu-byte blob",
      static_cast<unsigned long long>(const_offset),
      static_cast<unsigned long long>(const_size),
      static_cast<unsigned long long>(fb_offset + fb_size),
      size);
  ET_UNWRAP(view.graph, verify_graph(bytes + fb_offset, fb_size));
  view.constant_data = bytes + const_offset;
  view.constant_data_size = const_size;
  return view;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
