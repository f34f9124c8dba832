#pragma once

// Semantic checks of a parsed blob's graph, and what they establish: every
// value's dims, role and constant data; the delegate call's args layout; and
// for every node, that its inputs exist when it runs and that its declared
// output dims are the ones its inputs and params produce. XNNPACK sizes its
// buffers from declared dims and does not recompute them, so this check is
// what keeps a malformed blob from writing out of bounds.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/backends/xnnpack/runtime/blob.h>
#include <executorch/runtime/core/error.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// The largest rank the backend accepts (XNNPACK's XNN_MAX_TENSOR_DIMS).
inline constexpr size_t kMaxDims = 6;

struct ValueInfo {
  enum class Role { Intermediate, Constant, Input, Output };
  Role role = Role::Intermediate;
  std::vector<size_t> dims;
  size_t numel = 1;
  // Role::Constant: the value's bytes in the blob.
  const void* constant = nullptr;
  // Role::Input / Role::Output: position in the delegate call's args.
  uint32_t arg_index = 0;
};

struct CheckedGraph {
  std::vector<ValueInfo> values;
  // Value index of each input arg, then of each output arg (arg
  // inputs.size() + j is output j).
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
};

// Checks `blob`'s graph. Errors:
// InvalidProgram for malformed graphs, NotSupported for valid graphs using
// what this backend does not implement yet (e.g. quantized data types); each
// with a log line naming the value or node index and the field.
runtime::Error check_graph(const BlobView& blob, CheckedGraph* out);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
