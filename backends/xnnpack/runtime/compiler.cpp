#include <executorch/backends/xnnpack/runtime/compiler.h>

#include <algorithm>
#include <limits>
#include <new>

#include <executorch/backends/xnnpack/runtime/host_kernels.h>
#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

namespace {

constexpr size_t kNoProducer = std::numeric_limits<size_t>::max();
// Alignment of arena buffers; XNNPACK's kernels prefer 16 bytes.
constexpr size_t kBufferAlignment = 16;

size_t align_up(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// Defines value `v` in `subgraph` with its index as its id. The xnn_datatype
// values Debian's XNNPACK knows have the schema's numbers.
xnn_status define_value(xnn_subgraph_t subgraph,
                        const ValueInfo& info,
                        uint32_t v,
                        uint32_t flags) {
  const auto datatype = static_cast<xnn_datatype>(info.datatype);
  uint32_t id = 0;
  switch (info.quant.scheme) {
    case Quantization::Scheme::PerTensor:
      return xnn_define_quantized_tensor_value(subgraph,
                                               datatype,
                                               info.quant.zero_point,
                                               info.quant.scale,
                                               info.dims.size(),
                                               info.dims.data(),
                                               info.constant,
                                               v,
                                               flags,
                                               &id);
    case Quantization::Scheme::PerChannel:
      return xnn_define_channelwise_quantized_tensor_value(
          subgraph,
          datatype,
          info.quant.scales,
          info.dims.size(),
          info.quant.channel_dim,
          info.dims.data(),
          info.constant,
          v,
          flags,
          &id);
    case Quantization::Scheme::None:
      return xnn_define_tensor_value(subgraph,
                                     datatype,
                                     info.dims.size(),
                                     info.dims.data(),
                                     info.constant,
                                     v,
                                     flags,
                                     &id);
    default:
      // load_graph() rejects the datatypes of the other schemes.
      return xnn_status_unsupported_parameter;
  }
}

bool is_plain_fp32(const ValueInfo& info) {
  return info.datatype == fb_xnnpack::XNNDatatype::xnn_datatype_fp32 &&
      info.quant.scheme == Quantization::Scheme::None;
}

// Whether `node` runs as an operator step: a fully connected node whose
// values are all plain fp32 (load_graph() checked its filter and bias are
// constants).
bool runs_as_operator(const Graph& graph, const Node& node) {
  if (node.kind != fb_xnnpack::XNodeUnion::XNNFullyConnected) {
    return false;
  }
  for (const auto* list : {&node.inputs, &node.outputs}) {
    for (uint32_t v : *list) {
      if (v != kNoValue && !is_plain_fp32(graph.values[v])) {
        return false;
      }
    }
  }
  return true;
}

} // namespace

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

CompiledGraph::~CompiledGraph() {
  delete_runtimes();
  for (Step& step : steps) {
    if (step.op != nullptr) {
      xnn_delete_operator(step.op);
    }
  }
}

void CompiledGraph::delete_runtimes() {
  for (Step& step : steps) {
    if (step.runtime != nullptr) {
      xnn_delete_runtime(step.runtime);
      step.runtime = nullptr;
    }
    step.externals.clear();
    step.set_up = false;
  }
}

namespace {

// A reshape or copy between intermediates of the same element type only
// relabels dims: its output can share its input's bytes. (To or from an
// arg it stays a copy: args' memory is the caller's.)
bool is_view(const Graph& graph, const Node& node) {
  if ((node.kind != fb_xnnpack::XNodeUnion::XNNStaticReshape &&
       node.kind != fb_xnnpack::XNodeUnion::XNNCopy) ||
      node.inputs.size() != 1 || node.outputs.size() != 1 ||
      node.has_output_clamp) {
    return false;
  }
  const ValueInfo& in = graph.values[node.inputs[0]];
  const ValueInfo& out = graph.values[node.outputs[0]];
  return in.role == ValueInfo::Role::Intermediate &&
         out.role == ValueInfo::Role::Intermediate &&
         in.datatype == out.datatype && in.element_size == out.element_size &&
         in.element_size != 0;
}

} // namespace

Error CompiledGraph::plan_steps() {
  const size_t num_nodes = graph.nodes.size();
  const size_t num_values = graph.values.size();
  producer_.assign(num_values, kNoProducer);
  memory_of_.resize(num_values);
  for (size_t v = 0; v < num_values; ++v) {
    memory_of_[v] = static_cast<uint32_t>(v);
  }
  node_step_.assign(num_nodes, 0);
  fusions = find_fusions(graph);
  size_t next_fusion = 0;
  for (size_t i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    const Fusion* fusion =
        next_fusion < fusions.size() && fusions[next_fusion].first_node == i
            ? &fusions[next_fusion++]
            : nullptr;
    const bool view = fusion == nullptr && is_view(graph, node);
    if (view) {
      memory_of_[node.outputs[0]] = memory_of_[node.inputs[0]];
    }
    const bool on_host = fusion != nullptr || view ||
                         node.ops->define == nullptr ||
                         node.host_run != nullptr;
    const bool in_fusion = !steps.empty() && steps.back().fusion != nullptr &&
                           i < steps.back().end_node;
    const bool operator_step =
        !on_host && !in_fusion && runs_as_operator(graph, node);
    if (!in_fusion && (on_host || operator_step || steps.empty() ||
                       steps.back().on_host || steps.back().operator_step)) {
      Step step;
      step.first_node = i;
      step.on_host = on_host;
      step.operator_step = operator_step;
      step.fusion = fusion;
      step.view = view;
      steps.push_back(std::move(step));
    }
    Step& step = steps.back();
    step.end_node =
        fusion != nullptr ? fusion->end_node : std::max(step.end_node, i + 1);
    node_step_[i] = steps.size() - 1;
    for (uint32_t v : node.outputs) {
      producer_[v] = i;
    }
  }
  for (Step& step : steps) {
    const std::string first = std::to_string(step.first_node);
    const std::string last = std::to_string(step.end_node - 1);
    const std::string single =
        std::string(graph.nodes[step.first_node].ops->name) + " node " + first;
    if (step.fusion != nullptr) {
      step.event_name = "host " + std::string(step.fusion->name()) + " nodes " +
                        first + "-" + last;
    } else if (step.view) {
      step.event_name = "view node " + first;
    } else if (step.on_host) {
      step.event_name = "host " + single;
    } else if (step.operator_step) {
      step.event_name = "XNNPACK " + single;
    } else {
      step.event_name = "XNNPACK nodes " + first + "-" + last;
    }
  }
  // A value crosses steps when it is an arg, when a host node touches it
  // (a fused step touches only its run's input and output), or when it is
  // used in another step than the one producing it (always so for an
  // operator step's input and output). Outputs
  // nothing reads get memory of their own too: XNNPACK allocates no memory
  // for them and asserts when their node runs.
  crosses_steps_.assign(num_values, false);
  std::vector<bool> consumed(num_values, false);
  for (size_t v = 0; v < num_values; ++v) {
    const ValueInfo::Role role = graph.values[v].role;
    crosses_steps_[v] =
        role == ValueInfo::Role::Input || role == ValueInfo::Role::Output;
  }
  for (size_t i = 0; i < num_nodes; ++i) {
    const Node& node = graph.nodes[i];
    const Step& step = steps[node_step_[i]];
    const bool on_host = step.on_host && step.fusion == nullptr;
    for (uint32_t v : node.outputs) {
      crosses_steps_[v] = crosses_steps_[v] || on_host;
    }
    for (uint32_t v : node.inputs) {
      if (v == kNoValue) {
        continue;
      }
      consumed[v] = true;
      if (graph.values[v].role == ValueInfo::Role::Intermediate &&
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
  return Error::Ok;
}

// Intermediates that cross steps live in the arena, each followed by the
// XNN_EXTRA_BYTES XNNPACK may read. Values whose step lifetimes overlap get
// disjoint bytes; the others may share. Placement is greedy, largest first,
// at the lowest offset that fits between the placed values it overlaps.
Error CompiledGraph::plan_arena() {
  const size_t num_values = graph.values.size();
  // A view's readers keep its input's memory alive, which holds both.
  std::vector<size_t> last_step(num_values, 0);
  std::vector<size_t> bytes(num_values, 0);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (uint32_t v : graph.nodes[i].inputs) {
      if (v != kNoValue) {
        const uint32_t m = memory_of_[v];
        last_step[m] = std::max(last_step[m], node_step_[i]);
      }
    }
  }
  for (size_t v = 0; v < num_values; ++v) {
    const ValueInfo& info = graph.values[v];
    size_t& size = bytes[memory_of_[v]];
    size = std::max(size, info.max_numel * info.element_size);
  }
  struct Block {
    size_t value, first, last, size, offset;
  };
  std::vector<Block> blocks;
  for (size_t v = 0; v < num_values; ++v) {
    const ValueInfo& info = graph.values[v];
    if (crosses_steps_[v] && info.role == ValueInfo::Role::Intermediate &&
        memory_of_[v] == v) {
      const size_t first = node_step_[producer_[v]];
      blocks.push_back({v,
                        first,
                        std::max(first, last_step[v]),
                        align_up(bytes[v] + XNN_EXTRA_BYTES, kBufferAlignment),
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
    // Offsets only grow past placed blocks, which all end below arena_size,
    // so checking the end of each placement bounds them all.
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
  data.assign(num_values, nullptr);
  for (size_t v = 0; v < num_values; ++v) {
    if (graph.values[v].role == ValueInfo::Role::Constant) {
      // XNNPACK and the host kernels only read constants.
      data[v] = const_cast<void*>(graph.values[v].constant);
    }
  }
  for (const Block& block : blocks) {
    data[block.value] = arena_.get() + block.offset;
  }
  for (size_t v = 0; v < num_values; ++v) {
    if (memory_of_[v] != v) {
      data[v] = data[memory_of_[v]];
    }
  }
  return Error::Ok;
}

Error CompiledGraph::create_runtime(Step* step, pthreadpool_t pool) {
  const size_t num_values = graph.values.size();
  xnn_subgraph_t raw_subgraph = nullptr;
  // Every value keeps its index as its XNNPACK id, so the ids of all values
  // are reserved as external ids.
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
    const Node& node = graph.nodes[i];
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (uint32_t v : *list) {
        if (v == kNoValue || defined[v]) {
          continue;
        }
        defined[v] = true;
        uint32_t flags = 0;
        if (crosses_steps_[v]) {
          const bool produced_here =
              producer_[v] >= step->first_node && producer_[v] < step->end_node;
          flags = produced_here ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT
                                : XNN_VALUE_FLAG_EXTERNAL_INPUT;
          step->externals.push_back(xnn_external_value{v, nullptr});
        }
        status = define_value(subgraph.get(), graph.values[v], v, flags);
        ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                                 InvalidProgram,
                                 "XNNPACK rejected value %u (node %zu, %s): %s",
                                 graph.values[v].id,
                                 i,
                                 node.ops->name,
                                 status_name(status));
      }
    }
    status = node.ops->define(subgraph.get(), graph, node);
    ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                             InvalidProgram,
                             "XNNPACK rejected graph node %zu (%s): %s",
                             i,
                             node.ops->name,
                             status_name(status));
  }
  // No XNN_FLAG_YIELD_WORKERS: the pool's workers spin only briefly after
  // a job before they sleep (extension/threadpool/worker_pool.h), so the
  // next runtime or host step finds them awake.
  status = xnn_create_runtime_v2(
      subgraph.get(),
      runtime_pool(graph, step->first_node, step->end_node, pool),
      /*flags=*/0,
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

Error CompiledGraph::create_operator(Step* step) {
  const Node& node = graph.nodes[step->first_node];
  const bool transposed = (node.flags & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  const Dims& w = graph.values[node.inputs[1]].dims;
  const size_t k = transposed ? w[0] : w[1];
  const size_t n = transposed ? w[1] : w[0];
  const auto* bias =
      node.inputs[2] == kNoValue
          ? nullptr
          : static_cast<const float*>(graph.values[node.inputs[2]].constant);
  const xnn_status status = xnn_create_fully_connected_nc_f32(
      k,
      n,
      k,
      n,
      static_cast<const float*>(graph.values[node.inputs[1]].constant),
      bias,
      node.output_min,
      node.output_max,
      node.flags,
      &step->op);
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           InvalidProgram,
                           "XNNPACK cannot create the fully connected operator "
                           "of node %zu ([%zu] -> [%zu]): %s",
                           step->first_node,
                           k,
                           n,
                           status_name(status));
  return Error::Ok;
}

void CompiledGraph::release_packed_constants() {
  // Whether every reader of each value is an operator step's filter or bias.
  std::vector<bool> only_packed(graph.values.size(), true);
  for (const Step& step : steps) {
    for (size_t i = step.first_node; i < step.end_node; ++i) {
      const Node& node = graph.nodes[i];
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const uint32_t v = node.inputs[k];
        if (v != kNoValue && !(step.operator_step && k >= 1)) {
          only_packed[v] = false;
        }
      }
    }
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    ValueInfo& info = graph.values[v];
    if (only_packed[v] && info.role == ValueInfo::Role::Constant &&
        info.named_buffer < graph.named_buffers.size()) {
      graph.named_buffers[info.named_buffer].Free();
      info.constant = nullptr;
      data[v] = nullptr;
    }
  }
}

Error run_operator_step(CompiledGraph* compiled,
                        Step* step,
                        pthreadpool_t pool) {
  const Node& node = compiled->graph.nodes[step->first_node];
  const Dims& in = compiled->graph.values[node.inputs[0]].dims;
  const size_t batch = product(in, 0, in.size() - 1);
  const void* input = compiled->data[node.inputs[0]];
  void* output = compiled->data[node.outputs[0]];
  if (batch != step->op_batch || input != step->op_input ||
      output != step->op_output) {
    const xnn_status status =
        xnn_setup_fully_connected_nc_f32(step->op,
                                         batch,
                                         static_cast<const float*>(input),
                                         static_cast<float*>(output),
                                         pool);
    ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                             Internal,
                             "XNNPACK setup of fully connected node %zu for "
                             "%zu rows failed: %s",
                             step->first_node,
                             batch,
                             status_name(status));
    step->op_batch = batch;
    step->op_input = input;
    step->op_output = output;
  }
  const xnn_status status = xnn_run_operator(step->op, pool);
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           Internal,
                           "XNNPACK run of fully connected node %zu failed: %s",
                           step->first_node,
                           status_name(status));
  return Error::Ok;
}

Error compile(CompiledGraph* compiled) {
  take_nodes_on_host(&compiled->graph);
  ET_CHECK_OK_OR_RETURN_ERROR(compiled->plan_steps());
  return compiled->plan_arena();
}

pthreadpool_t runtime_pool(const Graph& graph,
                           size_t first,
                           size_t end,
                           pthreadpool_t pool) {
  size_t elements = 0;
  for (size_t i = first; i < end; ++i) {
    const Node& node = graph.nodes[i];
    switch (node.kind) {
      case fb_xnnpack::XNodeUnion::XNNAdd:
      case fb_xnnpack::XNodeUnion::XNNSubtract:
      case fb_xnnpack::XNodeUnion::XNNMultiply:
      case fb_xnnpack::XNodeUnion::XNNMinimum:
      case fb_xnnpack::XNodeUnion::XNNMaximum:
      case fb_xnnpack::XNodeUnion::XNNClamp:
      case fb_xnnpack::XNodeUnion::XNNConvert:
      case fb_xnnpack::XNodeUnion::XNNCopy:
      case fb_xnnpack::XNodeUnion::XNNGlobalAvgPooling2d:
        break;
      default:
        return pool;
    }
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (uint32_t v : *list) {
        if (v != kNoValue) {
          const Dims& dims = graph.values[v].dims;
          elements += product(dims, 0, dims.size());
        }
      }
    }
  }
  return pool_for(elements, kMinParallelStreamElements, pool);
}

Error build_runtimes(CompiledGraph* compiled, pthreadpool_t pool) {
  compiled->delete_runtimes();
  for (Step& step : compiled->steps) {
    if (step.operator_step) {
      if (step.op == nullptr) {
        ET_CHECK_OK_OR_RETURN_ERROR(compiled->create_operator(&step));
      }
    } else if (!step.on_host) {
      ET_CHECK_OK_OR_RETURN_ERROR(compiled->create_runtime(&step, pool));
    }
  }
  return Error::Ok;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
