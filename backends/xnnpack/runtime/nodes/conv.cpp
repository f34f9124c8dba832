// Convolutions on NHWC tensors (table _XNNNodeConv): conv2d, depthwise
// conv2d and transposed conv2d (deconvolution). Filters and biases are
// constants, packed by XNNPACK when a runtime is created.
//
// Filters: conv2d [groups * group_output_channels, KH, KW,
// group_input_channels]; depthwise [1, KH, KW, groups * depth multiplier]
// (group_input_channels 1, group_output_channels the multiplier);
// transposed the same as conv2d.

#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::_XNNNodeConv;
using fb_xnnpack::XNodeUnion;
using runtime::Error;

namespace {

Error read_conv(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const _XNNNodeConv*>(table);
  node->inputs = {t->input1_id(), t->filter_id(), t->bias_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error infer_conv(const NodeCheck& check, Dims* outputs) {
  const auto* p = check.params<_XNNNodeConv>();
  const XNodeUnion kind = check.node().kind;
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_rank4(0));
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_constant(1, "filter"));
  if (check.has_input(2)) {
    ET_CHECK_OK_OR_RETURN_ERROR(check.require_constant(2, "bias"));
  }
  ET_NODE_CHECK(check,
                p->kernel_height() >= 1 && p->kernel_width() >= 1 &&
                    p->subsampling_height() >= 1 &&
                    p->subsampling_width() >= 1 &&
                    p->dilation_height() >= 1 && p->dilation_width() >= 1 &&
                    p->groups() >= 1 && p->group_input_channels() >= 1 &&
                    p->group_output_channels() >= 1,
                InvalidProgram,
                "kernel, subsampling, dilation, groups and channels must be "
                ">= 1");
  const Dims& x = check.in(0);
  const uint64_t in_channels =
      uint64_t(p->groups()) * p->group_input_channels();
  const uint64_t out_channels =
      uint64_t(p->groups()) * p->group_output_channels();
  ET_NODE_CHECK(check,
                x[3] == in_channels,
                InvalidProgram,
                "input has %zu channels, expected groups %u x "
                "group_input_channels %u",
                x[3],
                p->groups(),
                p->group_input_channels());
  const bool depthwise = kind == XNodeUnion::XNNDepthwiseConv2d;
  ET_NODE_CHECK(check,
                !depthwise || p->group_input_channels() == 1,
                InvalidProgram,
                "depthwise needs group_input_channels 1");
  const Dims filter =
      depthwise ? Dims{1, p->kernel_height(), p->kernel_width(), out_channels}
                : Dims{out_channels,
                       p->kernel_height(),
                       p->kernel_width(),
                       p->group_input_channels()};
  char want[96], got[96];
  ET_NODE_CHECK(check,
                check.in(1) == filter,
                InvalidProgram,
                "filter dims %s, expected %s",
                format_dims(check.in(1), got, sizeof(got)),
                format_dims(filter, want, sizeof(want)));
  ET_NODE_CHECK(check,
                !check.has_input(2) || check.in(2) == Dims{out_channels},
                InvalidProgram,
                "bias dims %s, expected [%llu]",
                format_dims(check.in(2), got, sizeof(got)),
                static_cast<unsigned long long>(out_channels));
  size_t oh = 0, ow = 0;
  if (kind != XNodeUnion::XNNConvTranspose2d) {
    ET_NODE_CHECK(check,
                  window_out(x[1],
                             p->padding_top(),
                             p->padding_bottom(),
                             p->kernel_height(),
                             p->subsampling_height(),
                             p->dilation_height(),
                             &oh) &&
                      window_out(x[2],
                                 p->padding_left(),
                                 p->padding_right(),
                                 p->kernel_width(),
                                 p->subsampling_width(),
                                 p->dilation_width(),
                                 &ow),
                  InvalidProgram,
                  "padded input is smaller than the dilated kernel");
  } else {
    ET_NODE_CHECK(check,
                  p->adjustment_height() < p->subsampling_height() &&
                      p->adjustment_width() < p->subsampling_width(),
                  InvalidProgram,
                  "adjustment must be smaller than the stride");
    const uint64_t full_h = uint64_t(p->subsampling_height()) * (x[1] - 1) +
        p->adjustment_height() +
        uint64_t(p->kernel_height() - 1) * p->dilation_height() + 1;
    const uint64_t full_w = uint64_t(p->subsampling_width()) * (x[2] - 1) +
        p->adjustment_width() +
        uint64_t(p->kernel_width() - 1) * p->dilation_width() + 1;
    const uint64_t pad_h = uint64_t(p->padding_top()) + p->padding_bottom();
    const uint64_t pad_w = uint64_t(p->padding_left()) + p->padding_right();
    ET_NODE_CHECK(check,
                  full_h > pad_h && full_w > pad_w,
                  InvalidProgram,
                  "padding removes the whole output");
    oh = full_h - pad_h;
    ow = full_w - pad_w;
  }
  outputs[0] = {x[0], oh, ow, static_cast<size_t>(out_channels)};
  return Error::Ok;
}

xnn_status define_conv(xnn_subgraph_t subgraph,
                       const Graph& /*graph*/,
                       const Node& node) {
  const auto* p = static_cast<const _XNNNodeConv*>(node.params);
  const uint32_t in = node.inputs[0];
  const uint32_t filter = node.inputs[1];
  const uint32_t bias = node.inputs[2];
  const uint32_t out = node.outputs[0];
  switch (node.kind) {
    case XNodeUnion::XNNDepthwiseConv2d:
      return xnn_define_depthwise_convolution_2d(subgraph,
                                                 p->padding_top(),
                                                 p->padding_right(),
                                                 p->padding_bottom(),
                                                 p->padding_left(),
                                                 p->kernel_height(),
                                                 p->kernel_width(),
                                                 p->subsampling_height(),
                                                 p->subsampling_width(),
                                                 p->dilation_height(),
                                                 p->dilation_width(),
                                                 p->group_output_channels(),
                                                 p->groups(),
                                                 node.output_min,
                                                 node.output_max,
                                                 in,
                                                 filter,
                                                 bias,
                                                 out,
                                                 node.flags);
    case XNodeUnion::XNNConvTranspose2d:
      return xnn_define_deconvolution_2d(subgraph,
                                         p->padding_top(),
                                         p->padding_right(),
                                         p->padding_bottom(),
                                         p->padding_left(),
                                         p->adjustment_height(),
                                         p->adjustment_width(),
                                         p->kernel_height(),
                                         p->kernel_width(),
                                         p->subsampling_height(),
                                         p->subsampling_width(),
                                         p->dilation_height(),
                                         p->dilation_width(),
                                         p->groups(),
                                         p->group_input_channels(),
                                         p->group_output_channels(),
                                         node.output_min,
                                         node.output_max,
                                         in,
                                         filter,
                                         bias,
                                         out,
                                         node.flags);
    default:
      return xnn_define_convolution_2d(subgraph,
                                       p->padding_top(),
                                       p->padding_right(),
                                       p->padding_bottom(),
                                       p->padding_left(),
                                       p->kernel_height(),
                                       p->kernel_width(),
                                       p->subsampling_height(),
                                       p->subsampling_width(),
                                       p->dilation_height(),
                                       p->dilation_width(),
                                       p->groups(),
                                       p->group_input_channels(),
                                       p->group_output_channels(),
                                       node.output_min,
                                       node.output_max,
                                       in,
                                       filter,
                                       bias,
                                       out,
                                       node.flags);
  }
}

constexpr uint32_t kOptionalBias = 1u << 2;
constexpr uint32_t kPackedFilterAndBias = (1u << 1) | (1u << 2);

} // namespace

// clang-format off
extern const NodeOps kConv2dOps = {"conv2d", read_conv, infer_conv, define_conv, nullptr, true, kOptionalBias, kPackedFilterAndBias};
extern const NodeOps kDepthwiseConv2dOps = {"depthwise_conv2d", read_conv, infer_conv, define_conv, nullptr, true, kOptionalBias, kPackedFilterAndBias};
extern const NodeOps kConvTranspose2dOps = {"conv_transpose2d", read_conv, infer_conv, define_conv, nullptr, true, kOptionalBias, kPackedFilterAndBias};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
