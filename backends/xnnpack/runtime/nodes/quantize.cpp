// Datatype conversion (XNNConvert): quantizing fp32 to int8 or uint8 and
// dequantizing back, with the output's or input's per-tensor parameters.
// Dynamic quantization (fp32 to qdint8, parameters computed per row at run
// time) needs an XNNPACK newer than Debian's; graph.cpp rejects its
// datatype, naming the node.

#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

namespace {

xnn_status define_convert(xnn_subgraph_t subgraph,
                          const Graph& /*graph*/,
                          const Node& node) {
  return xnn_define_convert(subgraph, node.inputs[0], node.outputs[0], 0);
}

} // namespace

// clang-format off
extern const NodeOps kConvertOps = {"convert", read_node_1x1, infer_same_as_input, define_convert, nullptr, false, 0, 0};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
