// Pooling on NHWC tensors: average and max pooling windows (table
// _XNNPooling2D), global average pooling over H and W, and argmax pooling
// (value and index outputs).
//
// Flags: XNN_FLAG_KEEP_DIMS (0x40, newer XNNPACK) keeps global pooling's
// output 4-D ([N, 1, 1, C]); without it the output is [N, C]. Debian's
// XNNPACK predates the flag and writes the same bytes either way, so it is
// not passed on.

#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::_XNNPooling2D;
using fb_xnnpack::XNodeUnion;
using runtime::Error;

namespace {

constexpr uint32_t kKeepDims = 0x40;

Error read_pooling(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const _XNNPooling2D*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error infer_pooling(const NodeCheck& check, Dims* outputs) {
  const auto* p = check.params<_XNNPooling2D>();
  const bool is_max = check.node().kind == XNodeUnion::XNNMaxPooling2d;
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_rank4(0));
  ET_NODE_CHECK(check,
                (check.node().flags & ~kKeepDims) == 0,
                InvalidProgram,
                "flags 0x%x: only XNN_FLAG_KEEP_DIMS (0x40) is known",
                check.node().flags);
  // Average pooling has no dilation; upstream writes 0 there.
  const uint32_t dilation_h = is_max ? p->dilation_height() : 1;
  const uint32_t dilation_w = is_max ? p->dilation_width() : 1;
  ET_NODE_CHECK(check,
                p->pooling_height() >= 1 && p->pooling_width() >= 1 &&
                    p->stride_height() >= 1 && p->stride_width() >= 1 &&
                    dilation_h >= 1 && dilation_w >= 1,
                InvalidProgram,
                "pooling size, stride and dilation must be >= 1");
  const Dims& x = check.in(0);
  size_t oh = 0, ow = 0;
  ET_NODE_CHECK(check,
                window_out(x[1],
                           p->padding_top(),
                           p->padding_bottom(),
                           p->pooling_height(),
                           p->stride_height(),
                           dilation_h,
                           &oh) &&
                    window_out(x[2],
                               p->padding_left(),
                               p->padding_right(),
                               p->pooling_width(),
                               p->stride_width(),
                               dilation_w,
                               &ow),
                InvalidProgram,
                "padded input is smaller than the pooling window");
  outputs[0] = {x[0], oh, ow, x[3]};
  return Error::Ok;
}

xnn_status define_pooling(xnn_subgraph_t subgraph,
                          const Graph& /*graph*/,
                          const Node& node) {
  const auto* p = static_cast<const _XNNPooling2D*>(node.params);
  if (node.kind == XNodeUnion::XNNMaxPooling2d) {
    return xnn_define_max_pooling_2d(subgraph,
                                     p->padding_top(),
                                     p->padding_right(),
                                     p->padding_bottom(),
                                     p->padding_left(),
                                     p->pooling_height(),
                                     p->pooling_width(),
                                     p->stride_height(),
                                     p->stride_width(),
                                     p->dilation_height(),
                                     p->dilation_width(),
                                     node.output_min,
                                     node.output_max,
                                     node.inputs[0],
                                     node.outputs[0],
                                     0);
  }
  return xnn_define_average_pooling_2d(subgraph,
                                       p->padding_top(),
                                       p->padding_right(),
                                       p->padding_bottom(),
                                       p->padding_left(),
                                       p->pooling_height(),
                                       p->pooling_width(),
                                       p->stride_height(),
                                       p->stride_width(),
                                       node.output_min,
                                       node.output_max,
                                       node.inputs[0],
                                       node.outputs[0],
                                       0);
}

// Mean over H and W of NHWC: [N, 1, 1, C] with XNN_FLAG_KEEP_DIMS, else
// [N, C].
Error infer_global_avg_pooling(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_rank4(0));
  const uint32_t flags = check.node().flags;
  ET_NODE_CHECK(check,
                (flags & ~kKeepDims) == 0,
                InvalidProgram,
                "flags 0x%x: only XNN_FLAG_KEEP_DIMS (0x40) is known",
                flags);
  const Dims& x = check.in(0);
  outputs[0] = (flags & kKeepDims) != 0 ? Dims{x[0], 1, 1, x[3]}
                                        : Dims{x[0], x[3]};
  return Error::Ok;
}

xnn_status define_global_avg_pooling(xnn_subgraph_t subgraph,
                                     const Graph& /*graph*/,
                                     const Node& node) {
  return xnn_define_global_average_pooling_2d(subgraph,
                                              node.output_min,
                                              node.output_max,
                                              node.inputs[0],
                                              node.outputs[0],
                                              0);
}

Error read_argmax_pooling(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::XNNArgMaxPooling2d*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_value_id(), t->output_index_id()};
  node->flags = t->flags();
  return Error::Ok;
}

// Non-overlapping windows (the stride is the window).
Error infer_argmax_pooling(const NodeCheck& check, Dims* outputs) {
  const auto* p = check.params<fb_xnnpack::XNNArgMaxPooling2d>();
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_rank4(0));
  ET_NODE_CHECK(check,
                p->pooling_height() >= 1 && p->pooling_width() >= 1,
                InvalidProgram,
                "pooling size must be >= 1");
  const Dims& x = check.in(0);
  size_t oh = 0, ow = 0;
  ET_NODE_CHECK(check,
                window_out(x[1],
                           p->padding_top(),
                           p->padding_bottom(),
                           p->pooling_height(),
                           p->pooling_height(),
                           1,
                           &oh) &&
                    window_out(x[2],
                               p->padding_left(),
                               p->padding_right(),
                               p->pooling_width(),
                               p->pooling_width(),
                               1,
                               &ow),
                InvalidProgram,
                "padded input is smaller than the pooling window");
  outputs[0] = {x[0], oh, ow, x[3]};
  outputs[1] = outputs[0];
  return Error::Ok;
}

xnn_status define_argmax_pooling(xnn_subgraph_t subgraph,
                                 const Graph& /*graph*/,
                                 const Node& node) {
  const auto* p =
      static_cast<const fb_xnnpack::XNNArgMaxPooling2d*>(node.params);
  return xnn_define_argmax_pooling_2d(subgraph,
                                      p->padding_top(),
                                      p->padding_right(),
                                      p->padding_bottom(),
                                      p->padding_left(),
                                      p->pooling_height(),
                                      p->pooling_width(),
                                      node.inputs[0],
                                      node.outputs[0],
                                      node.outputs[1],
                                      0);
}

} // namespace

// clang-format off
extern const NodeOps kAvgPooling2dOps = {"avg_pooling2d", read_pooling, infer_pooling, define_pooling, nullptr, true, 0, 0};
extern const NodeOps kMaxPooling2dOps = {"max_pooling2d", read_pooling, infer_pooling, define_pooling, nullptr, true, 0, 0};
extern const NodeOps kGlobalAvgPooling2dOps = {"global_avg_pooling2d", read_node_1x1, infer_global_avg_pooling, define_global_avg_pooling, nullptr, true, 0, 0};
extern const NodeOps kArgMaxPooling2dOps = {"argmax_pooling2d", read_argmax_pooling, infer_argmax_pooling, define_argmax_pooling, nullptr, false, 0, 0};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
