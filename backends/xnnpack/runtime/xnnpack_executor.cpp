#include <executorch/backends/xnnpack/runtime/xnnpack_executor.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include <executorch/backends/xnnpack/runtime/host_ops.h>
#include <executorch/backends/xnnpack/runtime/node_traits.h>
#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>
#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;
using runtime::EValue;
using runtime::EventTracer;
using runtime::EventTracerEntry;
using runtime::kUnsetDebugHandle;
using runtime::Result;
using runtime::Span;
using xnnpack_graph::NodeKind;

namespace {

constexpr size_t kNoProducer = std::numeric_limits<size_t>::max();
// Alignment of intermediate buffers; XNNPACK's kernels prefer 16 bytes.
constexpr size_t kBufferAlignment = 16;
// Alignment the blob needs to be used in place: the flatbuffer's largest
// scalars (what operator new guarantees for the copy).
constexpr size_t kBlobAlignment = alignof(uint64_t);

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
  }
  return "unknown status";
}

size_t align_up(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

} // namespace

XnnpackExecutor::~XnnpackExecutor() {
  for (Step& step : steps_) {
    if (step.runtime != nullptr) {
      xnn_delete_runtime(step.runtime);
    }
  }
}

Error XnnpackExecutor::init(const void* blob, size_t size, size_t num_threads) {
  const xnn_status status = xnn_initialize(/*allocator=*/nullptr);
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           NotSupported,
                           "XNNPACK failed to initialize: %s",
                           status_name(status));
  // The flatbuffer is read in place, which needs it aligned, and XNNPACK
  // reads constants in place and may read XNN_EXTRA_BYTES past their end.
  // The serializer aligns and pads for that; a blob placed misaligned in
  // memory, or without the padding, is copied.
  bool copy = reinterpret_cast<uintptr_t>(blob) % kBlobAlignment != 0;
  if (!copy) {
    Result<BlobView> in_place = parse_blob(blob, size);
    ET_CHECK_OK_OR_RETURN_ERROR(in_place.error());
    copy = in_place->bytes_after_constant_data < XNN_EXTRA_BYTES;
  }
  if (copy) {
    blob_copy_.assign(size + XNN_EXTRA_BYTES, 0);
    std::memcpy(blob_copy_.data(), blob, size);
    blob = blob_copy_.data();
  }
  ET_UNWRAP(BlobView view, parse_blob(blob, size));
  graph_ = view.graph;
  ET_CHECK_OK_OR_RETURN_ERROR(check_graph(view, &checked_));
  ET_CHECK_OK_OR_RETURN_ERROR(refresh_output_sizes());
  threadpool_ = acquire_threadpool(num_threads);
  ET_CHECK_OK_OR_RETURN_ERROR(plan_steps());
  // Built at the declared dims even for dynamic inputs, so that a graph
  // XNNPACK rejects fails here rather than at the first call.
  return build_runtimes();
}

Error XnnpackExecutor::refresh_output_sizes() {
  output_sizes_.resize(checked_.outputs.size());
  for (size_t j = 0; j < checked_.outputs.size(); ++j) {
    const std::vector<size_t>& dims = checked_.values[checked_.outputs[j]].dims;
    std::vector<int32_t>& sizes = output_sizes_[j];
    sizes.clear();
    for (size_t d : dims) {
      ET_CHECK_OR_RETURN_ERROR(
          d <= static_cast<size_t>(std::numeric_limits<int32_t>::max()),
          InvalidProgram,
          "XNNPACK graph output %zu: dim %zu does not fit a tensor size",
          j,
          d);
      sizes.push_back(static_cast<int32_t>(d));
    }
  }
  return Error::Ok;
}

Error XnnpackExecutor::build_runtimes() {
  for (Step& step : steps_) {
    if (step.on_host) {
      continue;
    }
    if (step.runtime != nullptr) {
      xnn_delete_runtime(step.runtime);
      step.runtime = nullptr;
    }
    step.externals.clear();
    step.set_up = false;
    ET_CHECK_OK_OR_RETURN_ERROR(create_runtime(&step));
  }
  return Error::Ok;
}

Error XnnpackExecutor::resize_graph() {
  ET_CHECK_OK_OR_RETURN_ERROR(infer_dims(graph_, &checked_));
  ET_CHECK_OK_OR_RETURN_ERROR(refresh_output_sizes());
  ET_CHECK_OK_OR_RETURN_ERROR(build_runtimes());
  shape_stale_ = false;
  return Error::Ok;
}

Error XnnpackExecutor::plan_steps() {
  const auto* nodes = graph_->nodes();
  const size_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  const size_t num_values = checked_.values.size();
  producer_.assign(num_values, kNoProducer);
  node_step_.assign(num_nodes, 0);
  for (size_t i = 0; i < num_nodes; ++i) {
    const bool on_host = node_traits(nodes->Get(i)->kind())->on_host;
    if (on_host || steps_.empty() || steps_.back().on_host) {
      Step step;
      step.first_node = i;
      step.on_host = on_host;
      steps_.push_back(std::move(step));
    }
    steps_.back().end_node = i + 1;
    node_step_[i] = steps_.size() - 1;
    producer_[nodes->Get(i)->outputs()->Get(0)] = i;
  }
  for (Step& step : steps_) {
    step.event_name = step.on_host
                          ? "host " +
                                std::string(xnnpack_graph::EnumNameNodeKind(
                                    nodes->Get(step.first_node)->kind())) +
                                " node " + std::to_string(step.first_node)
                          : "XNNPACK nodes " + std::to_string(step.first_node) +
                                "-" + std::to_string(step.end_node - 1);
  }
  // A value crosses steps when it is an arg, or when a host node touches it,
  // or when it is used in another step than the one producing it. Outputs
  // nothing reads get memory of their own too: XNNPACK allocates no memory
  // for them and asserts when its node runs.
  crosses_steps_.assign(num_values, false);
  std::vector<bool> consumed(num_values, false);
  for (size_t v = 0; v < num_values; ++v) {
    const ValueInfo::Role role = checked_.values[v].role;
    crosses_steps_[v] =
        role == ValueInfo::Role::Input || role == ValueInfo::Role::Output;
  }
  for (size_t i = 0; i < num_nodes; ++i) {
    const auto* node = nodes->Get(i);
    const bool on_host = steps_[node_step_[i]].on_host;
    if (on_host) {
      crosses_steps_[node->outputs()->Get(0)] = true;
    }
    for (uint32_t v : *node->inputs()) {
      consumed[v] = true;
      if (checked_.values[v].role == ValueInfo::Role::Intermediate &&
          (on_host || node_step_[producer_[v]] != node_step_[i])) {
        crosses_steps_[v] = true;
      }
    }
  }
  for (size_t v = 0; v < num_values; ++v) {
    if (producer_[v] != kNoProducer && !consumed[v]) {
      crosses_steps_[v] = true;
    }
  }
  std::vector<size_t> offsets;
  ET_CHECK_OK_OR_RETURN_ERROR(plan_arena(&offsets));
  data_.assign(num_values, nullptr);
  for (size_t v = 0; v < num_values; ++v) {
    const ValueInfo& info = checked_.values[v];
    if (info.role == ValueInfo::Role::Constant) {
      // XNNPACK and the host kernels only read constants.
      data_[v] = const_cast<void*>(info.constant);
    } else if (crosses_steps_[v] &&
               info.role == ValueInfo::Role::Intermediate) {
      data_[v] = arena_.get() + offsets[v];
    }
  }
  return Error::Ok;
}

// Intermediates that cross steps live in the arena, each followed by the
// XNN_EXTRA_BYTES XNNPACK may read. Values whose step lifetimes overlap get
// disjoint bytes; the others may share. Placement is greedy, largest first,
// at the lowest offset that fits between the placed values it overlaps.
Error XnnpackExecutor::plan_arena(std::vector<size_t>* offsets) {
  const auto* nodes = graph_->nodes();
  const size_t num_values = checked_.values.size();
  std::vector<size_t> last_step(num_values, 0);
  for (size_t i = 0; i < node_step_.size(); ++i) {
    for (uint32_t v : *nodes->Get(i)->inputs()) {
      last_step[v] = std::max(last_step[v], node_step_[i]);
    }
  }
  struct Block {
    size_t value, first, last, size, offset;
  };
  std::vector<Block> blocks;
  for (size_t v = 0; v < num_values; ++v) {
    if (crosses_steps_[v] &&
        checked_.values[v].role == ValueInfo::Role::Intermediate) {
      const size_t first = node_step_[producer_[v]];
      blocks.push_back({v,
                        first,
                        std::max(first, last_step[v]),
                        align_up(checked_.values[v].max_numel * sizeof(float) +
                                     XNN_EXTRA_BYTES,
                                 kBufferAlignment),
                        0});
    }
  }
  std::stable_sort(
      blocks.begin(), blocks.end(), [](const Block& a, const Block& b) {
        return a.size > b.size;
      });
  size_t arena_size = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::vector<const Block*> live;
    for (size_t j = 0; j < i; ++j) {
      if (blocks[j].first <= blocks[i].last &&
          blocks[i].first <= blocks[j].last) {
        live.push_back(&blocks[j]);
      }
    }
    std::sort(live.begin(), live.end(), [](const Block* a, const Block* b) {
      return a->offset < b->offset;
    });
    // Offsets only grow past placed blocks, which all end below
    // arena_size, so checking the end of each placement bounds them all.
    size_t offset = 0;
    size_t end = 0;
    for (const Block* other : live) {
      if (offset + blocks[i].size <= other->offset) {
        break;
      }
      offset = std::max(offset, other->offset + other->size);
    }
    ET_CHECK_OR_RETURN_ERROR(
        !__builtin_add_overflow(offset, blocks[i].size, &end),
        MemoryAllocationFailed,
        "XNNPACK graph: buffers between steps exceed the address space");
    blocks[i].offset = offset;
    arena_size = std::max(arena_size, end);
  }
  // A blob can declare any sizes; running out of memory is an error, not an
  // abort.
  arena_.reset(new (std::nothrow) uint8_t[arena_size]);
  ET_CHECK_OR_RETURN_ERROR(arena_ != nullptr || arena_size == 0,
                           MemoryAllocationFailed,
                           "XNNPACK graph: cannot allocate %zu bytes for "
                           "values passed between steps",
                           arena_size);
  offsets->assign(num_values, 0);
  for (const Block& block : blocks) {
    (*offsets)[block.value] = block.offset;
  }
  return Error::Ok;
}

Error XnnpackExecutor::create_runtime(Step* step) {
  const auto* nodes = graph_->nodes();
  const size_t num_values = checked_.values.size();
  xnn_subgraph_t raw_subgraph = nullptr;
  // Every graph value keeps its index as its XNNPACK id, so the ids of all
  // values are reserved as external ids.
  xnn_status status = xnn_create_subgraph(
      static_cast<uint32_t>(num_values), /*flags=*/0, &raw_subgraph);
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           MemoryAllocationFailed,
                           "XNNPACK: cannot create a subgraph: %s",
                           status_name(status));
  std::unique_ptr<xnn_subgraph, decltype(&xnn_delete_subgraph)> subgraph(
      raw_subgraph, &xnn_delete_subgraph);
  std::vector<bool> defined(num_values, false);
  for (size_t i = step->first_node; i < step->end_node; ++i) {
    const auto* node = nodes->Get(i);
    const uint32_t output = node->outputs()->Get(0);
    for (size_t k = 0; k <= node->inputs()->size(); ++k) {
      const uint32_t v =
          k < node->inputs()->size() ? node->inputs()->Get(k) : output;
      if (defined[v]) {
        continue;
      }
      defined[v] = true;
      const ValueInfo& info = checked_.values[v];
      uint32_t flags = 0;
      if (crosses_steps_[v]) {
        const bool produced_here =
            producer_[v] >= step->first_node && producer_[v] < step->end_node;
        flags = produced_here ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT
                              : XNN_VALUE_FLAG_EXTERNAL_INPUT;
        step->externals.push_back(xnn_external_value{v, nullptr});
      }
      uint32_t id = 0;
      status = xnn_define_tensor_value(subgraph.get(),
                                       xnn_datatype_fp32,
                                       info.dims.size(),
                                       info.dims.data(),
                                       info.constant,
                                       v,
                                       flags,
                                       &id);
      ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                               InvalidProgram,
                               "XNNPACK rejected value %u: %s",
                               v,
                               status_name(status));
    }
    ET_CHECK_OK_OR_RETURN_ERROR(define_node(subgraph.get(), i));
  }
  // Workers sleep after the runtime's last operator instead of spinning:
  // what follows (a host step, the rest of the method, the caller) often
  // runs on the calling thread, and a spinning worker would compete with it
  // for a core.
  status = xnn_create_runtime_v2(subgraph.get(),
                                 threadpool_.get(),
                                 XNN_FLAG_YIELD_WORKERS,
                                 &step->runtime);
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           InvalidProgram,
                           "XNNPACK cannot create the runtime for nodes %zu "
                           "to %zu: %s",
                           step->first_node,
                           step->end_node - 1,
                           status_name(status));
  return Error::Ok;
}

Error XnnpackExecutor::define_node(xnn_subgraph_t subgraph, size_t index) {
  const auto* node = graph_->nodes()->Get(index);
  const auto* inputs = node->inputs();
  const uint32_t in = inputs->Get(0);
  const uint32_t in2 = inputs->size() > 1 ? inputs->Get(1) : 0;
  const uint32_t bias =
      inputs->size() > 2 ? inputs->Get(2) : XNN_INVALID_VALUE_ID;
  const uint32_t out = node->outputs()->Get(0);
  const float lo = node->clamp() != nullptr
                       ? node->clamp()->min()
                       : -std::numeric_limits<float>::infinity();
  const float hi = node->clamp() != nullptr
                       ? node->clamp()->max()
                       : std::numeric_limits<float>::infinity();
  xnn_status status = xnn_status_invalid_parameter;
  switch (node->kind()) {
    case NodeKind::conv2d: {
      const auto* p = node->params_as_Conv2dParams();
      status =
          p->depthwise()
              ? xnn_define_depthwise_convolution_2d(subgraph,
                                                    p->padding_top(),
                                                    p->padding_right(),
                                                    p->padding_bottom(),
                                                    p->padding_left(),
                                                    p->kernel_height(),
                                                    p->kernel_width(),
                                                    p->stride_height(),
                                                    p->stride_width(),
                                                    p->dilation_height(),
                                                    p->dilation_width(),
                                                    p->group_output_channels(),
                                                    p->groups(),
                                                    lo,
                                                    hi,
                                                    in,
                                                    in2,
                                                    bias,
                                                    out,
                                                    0)
              : xnn_define_convolution_2d(subgraph,
                                          p->padding_top(),
                                          p->padding_right(),
                                          p->padding_bottom(),
                                          p->padding_left(),
                                          p->kernel_height(),
                                          p->kernel_width(),
                                          p->stride_height(),
                                          p->stride_width(),
                                          p->dilation_height(),
                                          p->dilation_width(),
                                          p->groups(),
                                          p->group_input_channels(),
                                          p->group_output_channels(),
                                          lo,
                                          hi,
                                          in,
                                          in2,
                                          bias,
                                          out,
                                          0);
      break;
    }
    case NodeKind::deconv2d: {
      const auto* p = node->params_as_Conv2dParams();
      status = xnn_define_deconvolution_2d(subgraph,
                                           p->padding_top(),
                                           p->padding_right(),
                                           p->padding_bottom(),
                                           p->padding_left(),
                                           p->adjustment_height(),
                                           p->adjustment_width(),
                                           p->kernel_height(),
                                           p->kernel_width(),
                                           p->stride_height(),
                                           p->stride_width(),
                                           p->dilation_height(),
                                           p->dilation_width(),
                                           p->groups(),
                                           p->group_input_channels(),
                                           p->group_output_channels(),
                                           lo,
                                           hi,
                                           in,
                                           in2,
                                           bias,
                                           out,
                                           0);
      break;
    }
    case NodeKind::fully_connected:
      status = xnn_define_fully_connected(
          subgraph,
          lo,
          hi,
          in,
          in2,
          bias,
          out,
          node->params_as_FullyConnectedParams()->transpose_weights()
              ? XNN_FLAG_TRANSPOSE_WEIGHTS
              : 0);
      break;
    case NodeKind::add:
      status = xnn_define_add2(subgraph, lo, hi, in, in2, out, 0);
      break;
    case NodeKind::subtract:
      status = xnn_define_subtract(subgraph, lo, hi, in, in2, out, 0);
      break;
    case NodeKind::multiply:
      status = xnn_define_multiply2(subgraph, lo, hi, in, in2, out, 0);
      break;
    case NodeKind::divide:
      status = xnn_define_divide(subgraph, lo, hi, in, in2, out, 0);
      break;
    case NodeKind::maximum:
      status = xnn_define_maximum2(subgraph, in, in2, out, 0);
      break;
    case NodeKind::minimum:
      status = xnn_define_minimum2(subgraph, in, in2, out, 0);
      break;
    case NodeKind::clamp:
      status = xnn_define_clamp(subgraph, lo, hi, in, out, 0);
      break;
    case NodeKind::sigmoid:
      status = xnn_define_sigmoid(subgraph, in, out, 0);
      break;
    case NodeKind::hardswish:
      status = xnn_define_hardswish(subgraph, in, out, 0);
      break;
    case NodeKind::leaky_relu:
      status = xnn_define_leaky_relu(
          subgraph, node->params_as_ScalarParams()->value(), in, out, 0);
      break;
    case NodeKind::elu:
      status = xnn_define_elu(
          subgraph, node->params_as_ScalarParams()->value(), in, out, 0);
      break;
    case NodeKind::prelu:
      status = xnn_define_prelu(subgraph, in, in2, out, 0);
      break;
    case NodeKind::softmax:
      status = xnn_define_softmax(subgraph, in, out, 0);
      break;
    case NodeKind::max_pool2d: {
      const auto* p = node->params_as_Pool2dParams();
      status = xnn_define_max_pooling_2d(subgraph,
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
                                         lo,
                                         hi,
                                         in,
                                         out,
                                         0);
      break;
    }
    case NodeKind::avg_pool2d: {
      const auto* p = node->params_as_Pool2dParams();
      status = xnn_define_average_pooling_2d(subgraph,
                                             p->padding_top(),
                                             p->padding_right(),
                                             p->padding_bottom(),
                                             p->padding_left(),
                                             p->pooling_height(),
                                             p->pooling_width(),
                                             p->stride_height(),
                                             p->stride_width(),
                                             lo,
                                             hi,
                                             in,
                                             out,
                                             0);
      break;
    }
    case NodeKind::global_avg_pool2d:
      status =
          xnn_define_global_average_pooling_2d(subgraph, lo, hi, in, out, 0);
      break;
    case NodeKind::static_reshape: {
      const std::vector<size_t>& shape = checked_.values[out].dims;
      status = xnn_define_static_reshape(
          subgraph, shape.size(), shape.data(), in, out, 0);
      break;
    }
    case NodeKind::constant_pad: {
      const auto* p = node->params_as_ConstantPadParams();
      size_t pre[kMaxDims] = {};
      size_t post[kMaxDims] = {};
      for (size_t d = 0; d < p->pre_paddings()->size(); ++d) {
        pre[d] = p->pre_paddings()->Get(d);
        post[d] = p->post_paddings()->Get(d);
      }
      status = xnn_define_static_constant_pad(
          subgraph, pre, post, p->padding_value(), in, out, 0);
      break;
    }
    case NodeKind::resize_bilinear2d: {
      const auto* p = node->params_as_ResizeBilinear2dParams();
      status = xnn_define_static_resize_bilinear_2d(
          subgraph,
          p->new_height(),
          p->new_width(),
          in,
          out,
          p->align_corners() ? XNN_FLAG_ALIGN_CORNERS : 0);
      break;
    }
    case NodeKind::abs:
      status = xnn_define_abs(subgraph, in, out, 0);
      break;
    case NodeKind::negate:
      status = xnn_define_negate(subgraph, in, out, 0);
      break;
    case NodeKind::square_root:
      status = xnn_define_square_root(subgraph, in, out, 0);
      break;
    case NodeKind::square:
      status = xnn_define_square(subgraph, in, out, 0);
      break;
    case NodeKind::floor:
      status = xnn_define_floor(subgraph, in, out, 0);
      break;
    case NodeKind::ceiling:
      status = xnn_define_ceiling(subgraph, in, out, 0);
      break;
    default:
      // Host kinds never reach an XNNPACK step.
      break;
  }
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           InvalidProgram,
                           "XNNPACK rejected graph node %zu (%s): %s",
                           index,
                           xnnpack_graph::EnumNameNodeKind(node->kind()),
                           status_name(status));
  return Error::Ok;
}

Error XnnpackExecutor::take_input_sizes(size_t j,
                                        const executorch::aten::Tensor& t) {
  ValueInfo& info = checked_.values[checked_.inputs[j]];
  const std::vector<size_t>& bounds = info.max_dims;
  ET_CHECK_OR_RETURN_ERROR(static_cast<size_t>(t.dim()) == bounds.size(),
                           InvalidArgument,
                           "XnnpackBackend input %zu: rank %zd, expected %zu",
                           j,
                           t.dim(),
                           bounds.size());
  for (size_t d = 0; d < bounds.size(); ++d) {
    const size_t size = static_cast<size_t>(t.size(d));
    if ((info.dynamic_dims >> d & 1u) == 0) {
      ET_CHECK_OR_RETURN_ERROR(
          size == bounds[d],
          InvalidArgument,
          "XnnpackBackend input %zu: dim %zu is %zd, expected %zu",
          j,
          d,
          t.size(d),
          bounds[d]);
      continue;
    }
    // The runtime's buffers hold the upper bounds, no more.
    ET_CHECK_OR_RETURN_ERROR(size <= bounds[d],
                             InvalidArgument,
                             "XnnpackBackend input %zu: size %zd at dim %zu is "
                             "above its upper bound %zu",
                             j,
                             t.size(d),
                             d,
                             bounds[d]);
    ET_CHECK_OR_RETURN_ERROR(size >= 1,
                             InvalidArgument,
                             "XnnpackBackend input %zu: size 0 at dim %zu "
                             "(XNNPACK runs no empty tensors)",
                             j,
                             d);
  }
  for (size_t d = 0; d < bounds.size(); ++d) {
    const size_t size = static_cast<size_t>(t.size(d));
    shape_stale_ |= info.dims[d] != size;
    info.dims[d] = size;
  }
  return Error::Ok;
}

Error XnnpackExecutor::bind_args(Span<EValue*> args) {
  const size_t num_inputs = checked_.inputs.size();
  const size_t num_outputs = checked_.outputs.size();
  ET_CHECK_OR_RETURN_ERROR(args.size() == num_inputs + num_outputs,
                           InvalidArgument,
                           "XnnpackBackend: %zu args, expected %zu inputs "
                           "then %zu outputs",
                           args.size(),
                           num_inputs,
                           num_outputs);
  auto what = [&](size_t k) { return k < num_inputs ? "input" : "output"; };
  auto index = [&](size_t k) { return k < num_inputs ? k : k - num_inputs; };
  for (size_t k = 0; k < args.size(); ++k) {
    ET_CHECK_OR_RETURN_ERROR(args[k] != nullptr && args[k]->isTensor(),
                             InvalidArgument,
                             "XnnpackBackend %s %zu: not a tensor",
                             what(k),
                             index(k));
    const auto& t = args[k]->toTensor();
    ET_CHECK_OR_RETURN_ERROR(
        t.scalar_type() == ::executorch::aten::ScalarType::Float,
        InvalidArgument,
        "XnnpackBackend %s %zu: dtype %s, expected Float",
        what(k),
        index(k),
        ::executorch::runtime::toString(t.scalar_type()));
  }
  // The inputs' sizes give every other value's.
  for (size_t j = 0; j < num_inputs; ++j) {
    ET_CHECK_OK_OR_RETURN_ERROR(take_input_sizes(j, args[j]->toTensor()));
  }
  if (shape_stale_) {
    ET_CHECK_OK_OR_RETURN_ERROR(resize_graph());
  }
  for (size_t j = 0; j < num_outputs; ++j) {
    const auto& t = args[num_inputs + j]->toTensor();
    const std::vector<int32_t>& sizes = output_sizes_[j];
    ET_CHECK_OK_OR_RETURN_ERROR(runtime::resize_tensor(
        t, runtime::ArrayRef<int32_t>(sizes.data(), sizes.size())));
    const std::vector<size_t>& dims = checked_.values[checked_.outputs[j]].dims;
    ET_CHECK_OR_RETURN_ERROR(
        static_cast<size_t>(t.dim()) == dims.size(),
        InvalidArgument,
        "XnnpackBackend output %zu: rank %zd, expected %zu",
        j,
        t.dim(),
        dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      ET_CHECK_OR_RETURN_ERROR(
          static_cast<size_t>(t.size(d)) == dims[d],
          InvalidArgument,
          "XnnpackBackend output %zu: dim %zu is %zd, expected %zu",
          j,
          d,
          t.size(d),
          dims[d]);
    }
  }
  for (size_t k = 0; k < args.size(); ++k) {
    const auto& t = args[k]->toTensor();
    ET_CHECK_OR_RETURN_ERROR(runtime::tensor_is_contiguous(t),
                             InvalidArgument,
                             "XnnpackBackend %s %zu: dim order is not "
                             "contiguous",
                             what(k),
                             index(k));
    ET_CHECK_OR_RETURN_ERROR(t.mutable_data_ptr() != nullptr,
                             InvalidArgument,
                             "XnnpackBackend %s %zu: no data",
                             what(k),
                             index(k));
    const size_t j = index(k);
    data_[k < num_inputs ? checked_.inputs[j] : checked_.outputs[j]] =
        t.mutable_data_ptr();
  }
  return Error::Ok;
}

Error XnnpackExecutor::execute(Span<EValue*> args, EventTracer* event_tracer) {
  ET_CHECK_OK_OR_RETURN_ERROR(bind_args(args));
  for (Step& step : steps_) {
    ET_CHECK_OK_OR_RETURN_ERROR(run_step(step, event_tracer));
  }
  return Error::Ok;
}

Error XnnpackExecutor::run_step(Step& step, EventTracer* event_tracer) {
  const EventTracerEntry event = event_tracer_start_profiling_delegate(
      event_tracer, step.event_name.c_str(), kUnsetDebugHandle);
  const Error error = run_step_untraced(step);
  event_tracer_end_profiling_delegate(event_tracer, event);
  return error;
}

Error XnnpackExecutor::run_step_untraced(Step& step) {
  if (step.on_host) {
    return run_host_node(graph_->nodes()->Get(step.first_node),
                         checked_,
                         data_.data(),
                         threadpool_.get());
  }
  // Setting up a runtime is cheap but not free; the planned memory of a
  // method usually hands the same pointers every time.
  bool changed = !step.set_up;
  for (xnn_external_value& external : step.externals) {
    changed |= external.data != data_[external.id];
    external.data = data_[external.id];
  }
  if (changed) {
    const xnn_status status = xnn_setup_runtime(
        step.runtime, step.externals.size(), step.externals.data());
    ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                             Internal,
                             "XNNPACK setup of nodes %zu to %zu failed: %s",
                             step.first_node,
                             step.end_node - 1,
                             status_name(status));
    step.set_up = true;
  }
  const xnn_status status = xnn_invoke_runtime(step.runtime);
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           Internal,
                           "XNNPACK run of nodes %zu to %zu failed: %s",
                           step.first_node,
                           step.end_node - 1,
                           status_name(status));
  return Error::Ok;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
