#include <executorch/backends/xnnpack/runtime/host_kernels.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include <executorch/backends/xnnpack/runtime/f32_dwconv.h>
#include <executorch/backends/xnnpack/runtime/f32_gemm_conv.h>
#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#include <executorch/backends/xnnpack/runtime/qs8_conv.h>
#include <executorch/backends/xnnpack/runtime/qs8_dwconv.h>
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
#include <atomic>
#include <memory>

#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/optimized/cpu/winograd.h>
#endif

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

// A convolution shape's window (kernel, stride, dilation, top-left
// padding; the bottom and right follow from the output size) from the
// node's params.
template <typename Shape>
void set_window(const _XNNNodeConv& p, Shape* shape) {
  shape->kernel_h = p.kernel_height();
  shape->kernel_w = p.kernel_width();
  shape->stride_h = p.subsampling_height();
  shape->stride_w = p.subsampling_width();
  shape->dilation_h = p.dilation_height();
  shape->dilation_w = p.dilation_width();
  shape->pad_top = p.padding_top();
  shape->pad_left = p.padding_left();
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
  set_window(*p, &shape);
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

// Gives an fp32 convolution node (filter input 1, optional bias input 2,
// both constants) to `Kernel` if its init takes `shape`.
template <typename Kernel, typename Shape>
void take_f32_conv(const Graph& graph,
                   Node* node,
                   const Shape& shape,
                   Error (*run)(const HostContext&, const Node&)) {
  const float* bias =
      node->inputs[2] != kNoValue
          ? static_cast<const float*>(graph.values[node->inputs[2]].constant)
          : nullptr;
  auto conv = std::shared_ptr<Kernel>(new (std::nothrow) Kernel());
  if (conv == nullptr ||
      !conv->init(
          shape,
          static_cast<const float*>(graph.values[node->inputs[1]].constant),
          bias)) {
    return;
  }
  node->host_state = std::move(conv);
  node->host_run = run;
}

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
// A float32 convolution or fully connected node whose filter and bias (if
// any) are constants.
bool is_fp32_with_constant_weights(const Graph& graph, const Node& node) {
  const auto fp32 = XNNDatatype::xnn_datatype_fp32;
  const ValueInfo& filter = graph.values[node.inputs[1]];
  const bool has_bias = node.inputs[2] != kNoValue;
  return graph.values[node.inputs[0]].datatype == fp32 &&
         filter.datatype == fp32 &&
         graph.values[node.outputs[0]].datatype == fp32 &&
         filter.constant != nullptr &&
         (!has_bias || (graph.values[node.inputs[2]].datatype == fp32 &&
                        graph.values[node.inputs[2]].constant != nullptr));
}

// A float32 convolution on the optimized kernels' Winograd F(4x4, 3x3)
// (kernels/optimized/cpu/winograd.h), its filter transformed and packed at
// load.
struct WinogradConv {
  kernels::optimized::Winograd3x3 kernel;
  std::unique_ptr<float[]> packed;
  size_t pad_top = 0, pad_left = 0;
  float min = 0.0f, max = 0.0f;
};

// Tasks split across the delegate's pool (the kernel's plan gives a
// thread at least a GEMM grain of products), each with its thread's
// scratch (kernels/optimized/cpu/scratch.h: reused, so the steady state
// allocates nothing).
Error run_winograd_conv(const HostContext& context, const Node& node) {
  namespace opt = kernels::optimized;
  const auto& conv = *static_cast<const WinogradConv*>(node.host_state.get());
  const Dims& x = context.graph.values[node.inputs[0]].dims;
  const Dims& y = context.graph.values[node.outputs[0]].dims;
  const int64_t in_c = conv.kernel.in_channels();
  const int64_t out_c = conv.kernel.out_channels();
  opt::WinogradIo io;
  io.in = static_cast<const float*>(context.data[node.inputs[0]]);
  io.in_sn = static_cast<int64_t>(x[1] * x[2]) * in_c;
  io.in_sh = static_cast<int64_t>(x[2]) * in_c;
  io.in_sw = in_c;
  io.out = static_cast<float*>(context.data[node.outputs[0]]);
  io.out_sn = static_cast<int64_t>(y[1] * y[2]) * out_c;
  io.out_sh = static_cast<int64_t>(y[2]) * out_c;
  io.out_sw = out_c;
  io.batch = static_cast<int64_t>(x[0]);
  io.in_h = static_cast<int64_t>(x[1]);
  io.in_w = static_cast<int64_t>(x[2]);
  io.out_h = static_cast<int64_t>(y[1]);
  io.out_w = static_cast<int64_t>(y[2]);
  io.pad_top = static_cast<int64_t>(conv.pad_top);
  io.pad_left = static_cast<int64_t>(conv.pad_left);
  io.min = conv.min;
  io.max = conv.max;
  const int64_t threads =
      context.pool == nullptr
          ? 1
          : static_cast<int64_t>(pthreadpool_get_threads_count(context.pool));
  const int64_t tasks = conv.kernel.tasks(io, threads);
  const size_t bytes = conv.kernel.scratch_bytes(io, threads);
  std::atomic<bool> failed{false};
  auto task = [&](size_t t) {
    void* scratch = opt::thread_scratch(bytes);
    if (scratch == nullptr) {
      failed = true;
      return;
    }
    conv.kernel.run(io, threads, static_cast<int64_t>(t), scratch);
  };
  pthreadpool_parallelize_1d(
      tasks > 1 ? context.pool : nullptr,
      [](void* context, size_t t) {
        (*static_cast<decltype(task)*>(context))(t);
      },
      &task,
      static_cast<size_t>(tasks),
      /*flags=*/0);
  ET_CHECK_OR_RETURN_ERROR(!failed,
                           MemoryAllocationFailed,
                           "Winograd convolution: no memory for %zu bytes of "
                           "scratch",
                           bytes);
  ++opt::winograd_convolutions_run();
  return Error::Ok;
}

// A float32 3x3 convolution of stride 1, dilation 1 and one group, without
// flags, whose shape Winograd3x3::pays() for.
void take_winograd_conv(const Graph& graph, Node* node) {
  const auto* p = static_cast<const _XNNNodeConv*>(node->params);
  const ValueInfo& filter = graph.values[node->inputs[1]];
  const ValueInfo& out = graph.values[node->outputs[0]];
  const bool has_bias = node->inputs[2] != kNoValue;
  if (!is_fp32_with_constant_weights(graph, *node) || node->flags != 0 ||
      p->kernel_height() != 3 || p->kernel_width() != 3 ||
      p->subsampling_height() != 1 || p->subsampling_width() != 1 ||
      p->dilation_height() != 1 || p->dilation_width() != 1 ||
      !kernels::optimized::Winograd3x3::pays(p->group_input_channels(),
                                             p->group_output_channels(),
                                             out.dims[1] * out.dims[2])) {
    return;
  }
  auto conv = std::shared_ptr<WinogradConv>(new (std::nothrow) WinogradConv());
  const int64_t in_c = p->group_input_channels();
  if (conv == nullptr || !conv->kernel.init(in_c, p->group_output_channels())) {
    return;
  }
  conv->packed.reset(new (std::nothrow) float[conv->kernel.packed_floats()]);
  if (conv->packed == nullptr) {
    return;
  }
  // Filter [out, 3, 3, in].
  conv->kernel.pack(static_cast<const float*>(filter.constant),
                    9 * in_c,
                    1,
                    3 * in_c,
                    in_c,
                    has_bias ? static_cast<const float*>(
                                   graph.values[node->inputs[2]].constant)
                             : nullptr,
                    conv->packed.get());
  conv->pad_top = p->padding_top();
  conv->pad_left = p->padding_left();
  conv->min = node->output_min;
  conv->max = node->output_max;
  node->host_state = std::move(conv);
  node->host_run = run_winograd_conv;
}

Error run_f32_gemm_conv(const HostContext& context, const Node& node) {
  const auto& conv = *static_cast<const F32GemmConv*>(node.host_state.get());
  const Dims& x = context.graph.values[node.inputs[0]].dims;
  const Dims& y = context.graph.values[node.outputs[0]].dims;
  const auto* p = static_cast<const _XNNNodeConv*>(node.params);
  const size_t macs = x[0] * y[1] * y[2] * p->kernel_height() *
                      p->kernel_width() * p->group_input_channels() *
                      p->group_output_channels();
  ET_CHECK_OR_RETURN_ERROR(
      conv.run(static_cast<const float*>(context.data[node.inputs[0]]),
               x[0],
               x[1],
               x[2],
               static_cast<float*>(context.data[node.outputs[0]]),
               y[1],
               y[2],
               pool_for(macs, kMinParallelMacs, context.pool)),
      MemoryAllocationFailed,
      "convolution to value %u: no memory for its im2col matrix and GEMM "
      "scratch",
      context.graph.values[node.outputs[0]].id);
  return Error::Ok;
}

// A float32 one-group convolution whose filter is too large for XNNPACK's
// tiles to find in L2 (F32GemmConv::kMinFilterBytes) runs as one GEMM.
void take_f32_gemm_conv(const Graph& graph, Node* node) {
  const auto* p = static_cast<const _XNNNodeConv*>(node->params);
  const size_t filter_bytes = size_t{p->group_output_channels()} *
                              p->kernel_height() * p->kernel_width() *
                              p->group_input_channels() * sizeof(float);
  if (!is_fp32_with_constant_weights(graph, *node) || node->flags != 0 ||
      filter_bytes < F32GemmConv::kMinFilterBytes) {
    return;
  }
  F32GemmConvShape shape;
  set_window(*p, &shape);
  shape.in_channels = p->group_input_channels();
  shape.out_channels = p->group_output_channels();
  shape.output_min = node->output_min;
  shape.output_max = node->output_max;
  take_f32_conv<F32GemmConv>(graph, node, shape, run_f32_gemm_conv);
}

Error run_f32_gemm_fc(const HostContext& context, const Node& node) {
  const auto& fc = *static_cast<const F32GemmConv*>(node.host_state.get());
  const Dims& x = context.graph.values[node.inputs[0]].dims;
  const Dims& w = context.graph.values[node.inputs[1]].dims;
  // At the run's dims: a dynamic sequence length changes the row count.
  const size_t rows = product(x, 0, x.size() - 1);
  ET_CHECK_OR_RETURN_ERROR(
      fc.run(static_cast<const float*>(context.data[node.inputs[0]]),
             1,
             rows,
             1,
             static_cast<float*>(context.data[node.outputs[0]]),
             rows,
             1,
             pool_for(rows * w[0] * w[1], kMinParallelMacs, context.pool)),
      MemoryAllocationFailed,
      "fully connected to value %u: no memory for its GEMM scratch",
      context.graph.values[node.outputs[0]].id);
  return Error::Ok;
}

// A float32 fully connected node whose filter is past L2
// (F32GemmConv::kMinFilterBytes) runs as a 1x1 convolution of its input's
// rows on F32GemmConv: XNNPACK's streams the filter from L3 for every 7
// rows, as its convolutions do (README.md).
void take_f32_gemm_fc(const Graph& graph, Node* node) {
  const Dims& w = graph.values[node->inputs[1]].dims;
  if (!is_fp32_with_constant_weights(graph, *node) || w.size() != 2 ||
      w[0] * w[1] * sizeof(float) < F32GemmConv::kMinFilterBytes) {
    return;
  }
  // Filter [N, K], or [K, N] with XNN_FLAG_TRANSPOSE_WEIGHTS (checked at
  // load: no other flag).
  const bool transposed = (node->flags & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  F32GemmConvShape shape;
  shape.in_channels = transposed ? w[0] : w[1];
  shape.out_channels = transposed ? w[1] : w[0];
  shape.filter_transposed = transposed;
  shape.output_min = node->output_min;
  shape.output_max = node->output_max;
  take_f32_conv<F32GemmConv>(graph, node, shape, run_f32_gemm_fc);
}
#endif

Error run_f32_dwconv(const HostContext& context, const Node& node) {
  const auto& conv = *static_cast<const F32DwConv*>(node.host_state.get());
  const Dims& x = context.graph.values[node.inputs[0]].dims;
  const Dims& y = context.graph.values[node.outputs[0]].dims;
  conv.run(
      static_cast<const float*>(context.data[node.inputs[0]]),
      x[0],
      x[1],
      x[2],
      static_cast<float*>(context.data[node.outputs[0]]),
      y[1],
      y[2],
      pool_for(static_cast<size_t>(conv.cost_ns(x[0], x[1], x[2], y[1], y[2])),
               kMinParallelNs,
               context.pool),
      F32DwConv::selected_isa());
  return Error::Ok;
}

// An fp32 depthwise 3x3 convolution of multiplier 1 and dilation 1 takes
// F32DwConv where the optimized kernels run a vector loop (AVX2, AVX-512:
// measured faster than XNNPACK's, README.md; the SSE2 / NEON build was not
// compared).
void take_f32_dwconv(const Graph& graph, Node* node) {
  const auto* p = static_cast<const _XNNNodeConv*>(node->params);
  const Isa isa = F32DwConv::selected_isa();
  const auto fp32 = [&](uint32_t v) {
    return graph.values[v].datatype == XNNDatatype::xnn_datatype_fp32;
  };
  if (isa == Isa::kPortable || !F32DwConv::available(isa) ||
      p->kernel_height() != 3 || p->kernel_width() != 3 ||
      p->dilation_height() != 1 || p->dilation_width() != 1 ||
      p->group_output_channels() != 1 || node->flags != 0 ||
      !fp32(node->inputs[0]) || !fp32(node->inputs[1]) ||
      !fp32(node->outputs[0]) ||
      (node->inputs[2] != kNoValue && !fp32(node->inputs[2]))) {
    return;
  }
  F32DwConvShape shape;
  shape.stride_h = p->subsampling_height();
  shape.stride_w = p->subsampling_width();
  shape.pad_top = p->padding_top();
  shape.pad_left = p->padding_left();
  shape.channels = p->groups();
  shape.output_min = node->output_min;
  shape.output_max = node->output_max;
  take_f32_conv<F32DwConv>(graph, node, shape, run_f32_dwconv);
}

// One-group convolutions take Winograd when float32 and it pays, else
// F32GemmConv when float32 with a filter past L2, Qs8Conv
// (filter [out, kh, kw, in]) when int8 on a CPU with VNNI; depthwise ones
// F32DwConv when float32 3x3, Qs8DwConv (filter [1, kh, kw, channels],
// multiplier 1) with VNNI.
void take_conv(const Graph& graph, Node* node, bool vnni) {
  const auto* p = static_cast<const _XNNNodeConv*>(node->params);
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
  if (node->kind == XNodeUnion::XNNConv2d && p->groups() == 1) {
    take_winograd_conv(graph, node);
    if (node->host_run == nullptr) {
      take_f32_gemm_conv(graph, node);
    }
  }
#endif
  if (node->kind == XNodeUnion::XNNDepthwiseConv2d) {
    take_f32_dwconv(graph, node);
  }
  if (!vnni || node->host_run != nullptr) {
    return;
  }
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

std::shared_ptr<const F32DwConv> host_f32_dwconv(const Node& node) {
  return node.host_run == run_f32_dwconv
             ? std::static_pointer_cast<const F32DwConv>(node.host_state)
             : nullptr;
}

bool pointwise_conv(const Graph& graph,
                    const Node& node,
                    F32PointwiseConv* conv) {
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
  if (node.kind != XNodeUnion::XNNConv2d || node.host_run != nullptr ||
      node.flags != 0 || !is_fp32_with_constant_weights(graph, node)) {
    return false;
  }
  const auto* p = static_cast<const _XNNNodeConv*>(node.params);
  if (p->groups() != 1 || p->kernel_height() != 1 || p->kernel_width() != 1 ||
      p->subsampling_height() != 1 || p->subsampling_width() != 1 ||
      p->padding_top() != 0 || p->padding_left() != 0 ||
      p->padding_bottom() != 0 || p->padding_right() != 0) {
    return false;
  }
  conv->filter =
      static_cast<const float*>(graph.values[node.inputs[1]].constant);
  conv->bias =
      node.inputs[2] != kNoValue
          ? static_cast<const float*>(graph.values[node.inputs[2]].constant)
          : nullptr;
  conv->in_channels = p->group_input_channels();
  conv->out_channels = p->group_output_channels();
  conv->output_min = node.output_min;
  conv->output_max = node.output_max;
  return true;
#else
  (void)graph;
  (void)node;
  (void)conv;
  return false;
#endif
}

void take_nodes_on_host(Graph* graph) {
  if (!enabled()) {
    return;
  }
  const bool vnni = qs8::vnni_available();
  for (Node& node : graph->nodes) {
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
    if (node.kind == XNodeUnion::XNNFullyConnected) {
      take_f32_gemm_fc(*graph, &node);
      continue;
    }
#endif
    take_conv(*graph, &node, vnni);
  }
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
