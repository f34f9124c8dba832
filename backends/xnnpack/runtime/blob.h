#pragma once

// The delegate blob in upstream ExecuTorch's XNNPACK format: an optional
// 30-byte header ("XH00" at byte 4) locating the graph flatbuffer
// (serialization/schema.fbs, identifier "XN01", or "XN00" for older blobs)
// and a constant data area after it; without the header the whole blob is
// the flatbuffer. parse_blob() checks the header and verifies the
// flatbuffer's structure; graph.h checks what the graph means.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/result.h>

namespace fb_xnnpack {
struct XNNGraph;
} // namespace fb_xnnpack

namespace executorch {
namespace backends {
namespace xnnpack {

// Header layout (little-endian): 4 bytes unused, magic, u16 header length,
// u32 flatbuffer offset, u32 flatbuffer size, u32 constant data offset, u64
// constant data size.
inline constexpr char kHeaderMagic[4] = {'X', 'H', '0', '0'};
inline constexpr size_t kHeaderMagicOffset = 4;
inline constexpr size_t kHeaderSize = 30;

struct BlobView {
  const fb_xnnpack::XNNGraph* graph = nullptr;
  // The constant data area (ConstantDataOffset.offset is relative to it).
  const uint8_t* constant_data = nullptr;
  size_t constant_data_size = 0;
};

// Locates and verifies the parts of the `size` bytes at `data`, which must
// be 8-byte aligned (flatbuffer scalars are read in place). Errors:
// InvalidProgram with a log line naming the bad field.
runtime::Result<BlobView> parse_blob(const void* data, size_t size);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
