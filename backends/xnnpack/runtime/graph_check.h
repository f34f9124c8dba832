#pragma once

// Semantic checks of a parsed blob's graph, and what they establish: every
// value's dims, role and constant data; the delegate call's args layout; and
// for every node, that its inputs exist when it runs and that its declared
// output dims are the ones its inputs and params produce. XNNPACK sizes its
// buffers from declared dims and does not recompute them, so this check is
// what keeps a malformed blob from writing out of bounds.
//
// Graphs with dynamic inputs declare every value at the inputs' upper
// bounds; infer_dims() recomputes the actual dims, with the same per-node
// rules, when the inputs' sizes change.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/backends/xnnpack/runtime/blob.h>
#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>
#include <executorch/runtime/core/error.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// The largest rank the backend accepts (XNNPACK's XNN_MAX_TENSOR_DIMS).
inline constexpr size_t kMaxDims = 6;

struct ValueInfo {
  enum class Role { Intermediate, Constant, Input, Output };
  Role role = Role::Intermediate;
  // The current dims: as declared, or as infer_dims() last computed them.
  std::vector<size_t> dims;
  size_t numel = 1;
  // As declared: the upper bounds of a value of dynamic size. Buffers hold
  // max_numel elements.
  std::vector<size_t> max_dims;
  size_t max_numel = 1;
  // Role::Input: bit d is set when the args tensor gives dim d's size.
  uint32_t dynamic_dims = 0;
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
  // Some input has dynamic dims.
  bool dynamic = false;
};

// Checks `blob`'s graph. Errors:
// InvalidProgram for malformed graphs, NotSupported for valid graphs using
// what this backend does not implement yet (e.g. quantized data types); each
// with a log line naming the value or node index and the field.
runtime::Error check_graph(const BlobView& blob, CheckedGraph* out);

// Recomputes the dims and element count of every node's output from the
// current dims of `checked`'s inputs, for a graph check_graph() accepted.
// Errors: InvalidArgument when the inputs' sizes do not fit a node, or a
// value would outgrow the buffer of its declared dims; the log names the
// node.
runtime::Error infer_dims(const xnnpack_graph::Graph* graph,
                          CheckedGraph* checked);

// Dim `d` of a static_slice from an input dim of `n` elements: its first
// element and size under the dim's SliceMode. False when that window does
// not fit in `n` or the mode is unknown (the checks reject such nodes).
bool slice_window(const xnnpack_graph::SliceParams* params,
                  size_t d,
                  size_t n,
                  uint64_t* offset,
                  uint64_t* size);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
