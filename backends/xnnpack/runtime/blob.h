#pragma once

// The delegate blob: a fixed header, the graph flatbuffer and a constant data
// area (layout in backends/xnnpack/README.md). parse_blob() checks the header
// and the flatbuffer's structure; graph semantics are checked by
// check_graph() in graph_check.h.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/result.h>

namespace xnnpack_graph {
struct Graph;
} // namespace xnnpack_graph

namespace executorch {
namespace backends {
namespace xnnpack {

inline constexpr char kBlobMagic[4] = {'X', 'N', 'B', '1'};
inline constexpr size_t kBlobHeaderSize = 40;

struct BlobView {
  const xnnpack_graph::Graph* graph;
  const uint8_t* constant_data;
  size_t constant_data_size;
  // Bytes of the blob after the constant data (XNNPACK may read past the end
  // of a constant tensor; see graph_check.cpp).
  size_t bytes_after_constant_data;
};

// Locates and verifies the parts of `size` bytes at `data`. Errors:
// InvalidProgram with a log line naming the bad field.
runtime::Result<BlobView> parse_blob(const void* data, size_t size);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
