#pragma once

// What the backend knows about one node kind, in one place: how to read its
// params table, the dims its output takes, and either how to define it in an
// XNNPACK subgraph or how to run it on the host (the kinds Debian's 2022
// XNNPACK lacks). One NodeOps per kind of XNodeUnion, defined in
// nodes/<family>.cpp and listed in node_table.cpp; node_ops() is the only
// lookup, so a new kind is one entry in its family file and one in the table.

#include <cstddef>
#include <cstdint>

#include <pthreadpool.h>
#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/graph.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// Checks one node's inputs against each other and its params. One instance
// per node and check.
class NodeCheck {
 public:
  NodeCheck(const Graph& graph, const Node& node, size_t index);

  const Node& node() const {
    return node_;
  }
  template <typename Table>
  const Table* params() const {
    return static_cast<const Table*>(node_.params);
  }
  size_t index() const {
    return index_;
  }
  const char* name() const;
  size_t num_inputs() const {
    return node_.inputs.size();
  }
  bool has_input(size_t i) const {
    return i < node_.inputs.size() && node_.inputs[i] != kNoValue;
  }
  const ValueInfo& input(size_t i) const {
    return graph_.values[node_.inputs[i]];
  }
  // Current dims of input i.
  const Dims& in(size_t i) const {
    return input(i).dims;
  }
  const ValueInfo& output(size_t i) const {
    return graph_.values[node_.outputs[i]];
  }

  // InvalidProgram unless input `i` is 4-D (an NHWC tensor).
  runtime::Error require_rank4(size_t i) const;
  // InvalidProgram unless input `i` is a constant.
  runtime::Error require_constant(size_t i, const char* what) const;
  // NotSupported unless every input and output is fp32 (host kernels).
  runtime::Error require_fp32() const;

 private:
  const Graph& graph_;
  const Node& node_;
  size_t index_;
};

// Log-and-return for a node check: `cond` false returns `error` with a line
// "XNNPACK graph node <i> (<kind>): <message>".
#define ET_NODE_CHECK(check, cond, error, fmt, ...)              \
  ET_CHECK_OR_RETURN_ERROR(cond,                                 \
                           error,                                \
                           "XNNPACK graph node %zu (%s): " fmt,  \
                           (check).index(),                      \
                           (check).name(),                       \
                           ##__VA_ARGS__)

// What a host step runs with: `data[v]` is the memory of value v.
struct HostContext {
  const Graph& graph;
  void* const* data;
  pthreadpool_t pool;
};

struct NodeOps {
  // The kind's name in log lines ("conv2d").
  const char* name;
  // Reads the kind's params table into `node`: its inputs and outputs (blob
  // ids, remapped to value indices by the caller) and flags. Checks what
  // the table alone says (e.g. counts of per-dim vectors).
  runtime::Error (*read)(const void* table, Node* node, size_t index);
  // The dims of each output (outputs[k] for node.outputs[k]) from the
  // current dims of the inputs.
  runtime::Error (*infer)(const NodeCheck& check, Dims* outputs);
  // Adds the node to an XNNPACK subgraph, with value indices as ids. Null
  // for host kinds.
  xnn_status (*define)(xnn_subgraph_t subgraph,
                       const Graph& graph,
                       const Node& node);
  // Runs the node on the host. Null for kinds XNNPACK runs.
  runtime::Error (*run)(const HostContext& context, const Node& node);
  // Whether the node may carry a fused output clamp (output_min_max).
  bool takes_output_clamp;
  // Bit i set: input i may be absent (kNoValue), e.g. a bias.
  uint32_t optional_inputs;
  // Bit i set: XNNPACK packs input i (a constant filter or bias) into its own
  // memory when the runtime is created, instead of reading it in place.
  uint32_t packed_inputs;
};

// The ops of `kind`, or null for an unknown kind.
const NodeOps* node_ops(fb_xnnpack::XNodeUnion kind);

// Readers shared by the kinds whose tables several families use.
runtime::Error read_node_1x1(const void* table, Node* node, size_t index);
runtime::Error read_node_2x1(const void* table, Node* node, size_t index);

// Output dims equal to input 0's (elementwise unary kinds).
runtime::Error infer_same_as_input(const NodeCheck& check, Dims* outputs);

// Output size of one spatial dim of a sliding window (convolutions, pools);
// false when the padded input is smaller than the window.
bool window_out(size_t in,
                uint32_t pad_a,
                uint32_t pad_b,
                uint32_t window,
                uint32_t stride,
                uint32_t dilation,
                size_t* out);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
