#include <executorch/backends/xnnpack/runtime/host_kernels.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#include <executorch/backends/xnnpack/runtime/qs8_conv.h>
#include <executorch/backends/xnnpack/runtime/qs8_dwconv.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::_XNNNodeConv;
using fb_xnnpack::XNNDatatype;
using fb_xnnpack::XNodeUnion;
using runtime::Error;

namespace {

bool is_per_tensor(const ValueInfo& v, XNNDatatype datatype) {
  return v.datatype == datatype &&
         v.quant.scheme == Quantization::Scheme::PerTensor;
}

// A clamp bound in the float domain as an int8 value, as XNNPACK rounds it.
int32_t quantize_bound(float value, float scale, int32_t zero_point) {
  const float q =
      std::min(std::max(value / scale + zero_point, -128.0f), 127.0f);
  return static_cast<int32_t>(std::nearbyint(q));
}

// A convolution's estimated thread CPU time (ns) from `x` to `y` (NHWC).
size_t cost_ns(const Qs8Conv& conv, const Dims& /*x*/, const Dims& y) {
  return static_cast<size_t>(conv.cost_ns(y[0], y[1], y[2]));
}
size_t cost_ns(const Qs8DwConv& conv, const Dims& x, const Dims& y) {
  return static_cast<size_t>(conv.cost_ns(x[0], x[1], x[2], y[1], y[2]));
}

// A host convolution kernel (Qs8Conv, Qs8DwConv) that init prepared.
template <typename Kernel>
Error run_qs8_conv(const HostContext& context, const Node& node) {
  const auto& conv = *static_cast<const Kernel*>(node.host_state.get());
  const Dims& x = context.graph.values[node.inputs[0]].dims;
  const Dims& y = context.graph.values[node.outputs[0]].dims;
  conv.run(static_cast<const int8_t*>(context.data[node.inputs[0]]),
           x[0],
           x[1],
           x[2],
           static_cast<int8_t*>(context.data[node.outputs[0]]),
           y[1],
           y[2],
           pool_for(cost_ns(conv, x, y), kMinParallelNs, context.pool),
           /*vnni=*/true);
  return Error::Ok;
}

// A convolution from qint8 to qint8 with int8 weights (per channel along
// the filter's `channel_dim`, or per tensor with zero point 0) and an int32
// bias, on `Kernel` if its init takes the shape. `in_channels` and
// `channels` are the kernel's (a depthwise one has both equal).
template <typename Kernel>
void take_qs8_conv(const Graph& graph,
                   Node* node,
                   uint32_t channel_dim,
                   size_t in_channels,
                   size_t channels) {
  const auto* p = static_cast<const _XNNNodeConv*>(node->params);
  const ValueInfo& in = graph.values[node->inputs[0]];
  const ValueInfo& filter = graph.values[node->inputs[1]];
  const ValueInfo& out = graph.values[node->outputs[0]];
  const bool per_channel =
      filter.datatype == XNNDatatype::xnn_datatype_qcint8 &&
      filter.quant.scheme == Quantization::Scheme::PerChannel &&
      filter.quant.channel_dim == channel_dim &&
      filter.quant.num_scales == channels;
  const bool per_tensor =
      is_per_tensor(filter, XNNDatatype::xnn_datatype_qint8) &&
      filter.quant.zero_point == 0;
  if (!is_per_tensor(in, XNNDatatype::xnn_datatype_qint8) ||
      !is_per_tensor(out, XNNDatatype::xnn_datatype_qint8) ||
      !(per_channel || per_tensor)) {
    return;
  }
  const int32_t* bias = nullptr;
  if (node->inputs[2] != kNoValue) {
    const ValueInfo& b = graph.values[node->inputs[2]];
    if (b.datatype != XNNDatatype::xnn_datatype_qint32 &&
        b.datatype != XNNDatatype::xnn_datatype_qcint32) {
      return;
    }
    bias = static_cast<const int32_t*>(b.constant);
  }
  std::vector<float> scales(channels, filter.quant.scale);
  if (per_channel) {
    std::copy(
        filter.quant.scales, filter.quant.scales + channels, scales.begin());
  }
  Qs8ConvShape shape;
  shape.kernel_h = p->kernel_height();
  shape.kernel_w = p->kernel_width();
  shape.stride_h = p->subsampling_height();
  shape.stride_w = p->subsampling_width();
  shape.dilation_h = p->dilation_height();
  shape.dilation_w = p->dilation_width();
  shape.pad_top = p->padding_top();
  shape.pad_left = p->padding_left();
  shape.in_channels = in_channels;
  shape.out_channels = channels;
  Qs8ConvQuant quant;
  quant.input_scale = in.quant.scale;
  quant.input_zero_point = in.quant.zero_point;
  quant.filter_scales = scales.data();
  quant.output_scale = out.quant.scale;
  quant.output_zero_point = out.quant.zero_point;
  quant.output_min =
      quantize_bound(node->output_min, out.quant.scale, out.quant.zero_point);
  quant.output_max =
      quantize_bound(node->output_max, out.quant.scale, out.quant.zero_point);
  auto conv = std::shared_ptr<Kernel>(new (std::nothrow) Kernel());
  if (conv == nullptr ||
      !conv->init(
          shape, quant, static_cast<const int8_t*>(filter.constant), bias)) {
    return;
  }
  node->host_state = std::move(conv);
  node->host_run = run_qs8_conv<Kernel>;
}

// One-group convolutions take Qs8Conv (filter [out, kh, kw, in]);
// depthwise ones of multiplier 1 Qs8DwConv (filter [1, kh, kw, channels]).
void take_conv(const Graph& graph, Node* node) {
  const auto* p = static_cast<const _XNNNodeConv*>(node->params);
  if (node->kind == XNodeUnion::XNNConv2d && p->groups() == 1) {
    take_qs8_conv<Qs8Conv>(graph,
                           node,
                           /*channel_dim=*/0,
                           p->group_input_channels(),
                           p->group_output_channels());
  } else if (node->kind == XNodeUnion::XNNDepthwiseConv2d &&
             p->group_output_channels() == 1) {
    take_qs8_conv<Qs8DwConv>(
        graph, node, /*channel_dim=*/3, p->groups(), p->groups());
  }
}

bool enabled() {
  const char* setting = std::getenv("EXECUTORCH_XNNPACK_HOST_KERNELS");
  return setting == nullptr || std::strcmp(setting, "0") != 0;
}

} // namespace

void take_nodes_on_host(Graph* graph) {
  if (!enabled() || !qs8::vnni_available()) {
    return;
  }
  for (Node& node : graph->nodes) {
    take_conv(*graph, &node);
  }
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
