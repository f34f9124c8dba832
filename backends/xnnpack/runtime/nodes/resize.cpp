// Bilinear resizing of NHWC tensors to a fixed height and width.

#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

namespace {

using Table = fb_xnnpack::XNNStaticResizeBilinear2D;

Error read_resize(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const Table*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error infer_resize(const NodeCheck& check, Dims* outputs) {
  const auto* p = check.params<Table>();
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_rank4(0));
  constexpr uint32_t kKnownFlags =
      XNN_FLAG_ALIGN_CORNERS | XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  ET_NODE_CHECK(check,
                (check.node().flags & ~kKnownFlags) == 0 &&
                    check.node().flags != kKnownFlags,
                InvalidProgram,
                "flags 0x%x: expected at most one of XNN_FLAG_ALIGN_CORNERS "
                "(8) and XNN_FLAG_TENSORFLOW_LEGACY_MODE (4)",
                check.node().flags);
  ET_NODE_CHECK(check,
                p->new_height() >= 1 && p->new_width() >= 1,
                InvalidProgram,
                "new size must be at least 1x1");
  const Dims& x = check.in(0);
  outputs[0] = {x[0], p->new_height(), p->new_width(), x[3]};
  return Error::Ok;
}

xnn_status define_resize(xnn_subgraph_t subgraph,
                         const Graph& /*graph*/,
                         const Node& node) {
  const auto* p = static_cast<const Table*>(node.params);
  return xnn_define_static_resize_bilinear_2d(subgraph,
                                              p->new_height(),
                                              p->new_width(),
                                              node.inputs[0],
                                              node.outputs[0],
                                              node.flags);
}

} // namespace

// clang-format off
extern const NodeOps kStaticResizeBilinear2DOps = {"static_resize_bilinear2d", read_resize, infer_resize, define_resize, nullptr, false, 0, 0};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
