#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

NodeCheck::NodeCheck(const Graph& graph, const Node& node, size_t index)
    : graph_(graph), node_(node), index_(index) {}

const char* NodeCheck::name() const {
  return node_.ops->name;
}

Error NodeCheck::require_rank4(size_t i) const {
  ET_NODE_CHECK(*this,
                in(i).size() == 4,
                InvalidProgram,
                "input %zu must be 4-D (NHWC), got rank %zu",
                i,
                in(i).size());
  return Error::Ok;
}

Error NodeCheck::require_constant(size_t i, const char* what) const {
  ET_NODE_CHECK(*this,
                input(i).role == ValueInfo::Role::Constant,
                InvalidProgram,
                "the %s (input %zu) must be a constant",
                what,
                i);
  return Error::Ok;
}

Error NodeCheck::require_fp32() const {
  for (const auto* list : {&node_.inputs, &node_.outputs}) {
    for (uint32_t v : *list) {
      ET_NODE_CHECK(*this,
                    v == kNoValue || graph_.values[v].datatype ==
                        fb_xnnpack::XNNDatatype::xnn_datatype_fp32,
                    NotSupported,
                    "value %u is %s; this kind runs on fp32 only",
                    graph_.values[v].id,
                    fb_xnnpack::EnumNameXNNDatatype(graph_.values[v].datatype));
    }
  }
  return Error::Ok;
}

Error read_node_1x1(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode1x1*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error read_node_2x1(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::_XNNNode2x1*>(table);
  node->inputs = {t->input1_id(), t->input2_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error infer_same_as_input(const NodeCheck& check, Dims* outputs) {
  outputs[0] = check.in(0);
  return Error::Ok;
}

bool window_out(size_t in,
                uint32_t pad_a,
                uint32_t pad_b,
                uint32_t window,
                uint32_t stride,
                uint32_t dilation,
                size_t* out) {
  const uint64_t padded = uint64_t(in) + pad_a + pad_b;
  const uint64_t span = uint64_t(window - 1) * dilation + 1;
  if (padded < span) {
    return false;
  }
  *out = static_cast<size_t>((padded - span) / stride + 1);
  return true;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
