// Softmax over the last dim.

#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

namespace {

Error infer_softmax(const NodeCheck& check, Dims* outputs) {
  ET_NODE_CHECK(check,
                !check.in(0).empty(),
                InvalidProgram,
                "input must be at least 1-D");
  outputs[0] = check.in(0);
  return Error::Ok;
}

xnn_status define_softmax(xnn_subgraph_t subgraph,
                          const Graph& /*graph*/,
                          const Node& node) {
  return xnn_define_softmax(subgraph, node.inputs[0], node.outputs[0], 0);
}

} // namespace

// clang-format off
extern const NodeOps kSoftmaxOps = {"softmax", read_node_1x1, infer_softmax, define_softmax, nullptr, false, 0, 0};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
