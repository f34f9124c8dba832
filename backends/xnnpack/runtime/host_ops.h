#pragma once

// The node kinds Debian's XNNPACK has no subgraph node for, run by the
// backend itself between XNNPACK runtimes: static_transpose,
// static_slice, concatenate, tanh, gelu, batch_matrix_multiply, layer_norm
// and safe_softmax. Inputs and outputs are contiguous fp32 tensors whose
// current dims (CheckedGraph) check_graph() or infer_dims() has verified
// against the node.

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/graph_check.h>
#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>
#include <executorch/runtime/core/error.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// Runs `node`, a host kind (node_traits(kind)->on_host). `data[v]` is the
// memory of value v. Fails only when XNNPACK's operators (batch matmul)
// do.
runtime::Error run_host_node(const xnnpack_graph::Node* node,
                             const CheckedGraph& graph,
                             void* const* data,
                             pthreadpool_t pool);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
