#include <executorch/backends/xnnpack/runtime/executor.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/huge_page_allocator.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using executorch::aten::ScalarType;
using fb_xnnpack::XNNDatatype;
using runtime::Error;
using runtime::EValue;
using runtime::Span;

namespace {

// Copies `t`, an arg in another dim order, to `row_major` (its elements in
// logical order, as XNNPACK's values hold them) or back, with the host
// steps' gather. t's rank is its graph value's (at most kMaxDims); `dims`
// is scratch kept across calls.
void copy_layout(const executorch::aten::Tensor& t,
                 uint8_t* row_major,
                 bool into_tensor,
                 Dims* dims,
                 pthreadpool_t pool) {
  const size_t rank = static_cast<size_t>(t.dim());
  size_t step[kMaxDims];
  dims->resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    (*dims)[d] = static_cast<size_t>(t.size(d));
  }
  if (!into_tensor) {
    for (size_t d = 0; d < rank; ++d) {
      step[d] = static_cast<size_t>(t.strides()[d]);
    }
    gather(
        t.const_data_ptr(), 0, step, *dims, t.element_size(), row_major, pool);
    return;
  }
  // t's memory, dims in dim order, read from the logical row-major buffer.
  size_t logical[kMaxDims];
  row_major_strides(*dims, logical);
  const auto order = t.dim_order();
  for (size_t k = 0; k < rank; ++k) {
    step[k] = logical[order[k]];
    (*dims)[k] = static_cast<size_t>(t.size(order[k]));
  }
  gather(
      row_major, 0, step, *dims, t.element_size(), t.mutable_data_ptr(), pool);
}

// The tensor dtype of an arg holding values of `datatype`.
bool arg_scalar_type(XNNDatatype datatype, ScalarType* type) {
  switch (datatype) {
    case XNNDatatype::xnn_datatype_fp32:
      *type = ScalarType::Float;
      return true;
    case XNNDatatype::xnn_datatype_fp16:
      *type = ScalarType::Half;
      return true;
    case XNNDatatype::xnn_datatype_qint8:
      *type = ScalarType::Char;
      return true;
    case XNNDatatype::xnn_datatype_quint8:
      *type = ScalarType::Byte;
      return true;
    case XNNDatatype::xnn_datatype_qint32:
    case XNNDatatype::xnn_datatype_int32:
      *type = ScalarType::Int;
      return true;
    default:
      return false;
  }
}

// A rank-0 arg is declared [1], as upstream declares scalars.
bool is_scalar_for(const executorch::aten::Tensor& t, const Dims& declared) {
  return t.dim() == 0 && declared == Dims{1};
}

} // namespace

Error XnnpackExecutor::init(const void* blob,
                            size_t size,
                            const runtime::NamedDataMap* named_data_map,
                            size_t num_threads) {
  const xnn_status status = initialize_xnnpack();
  ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                           NotSupported,
                           "XNNPACK failed to initialize: %s",
                           status_name(status));
  // The flatbuffer is read in place, which needs it aligned like its
  // largest scalars; a blob placed misaligned in memory is copied. An empty
  // one has nothing to copy (the empty copy's data() is null, which memcpy
  // must not get) and parse_blob refuses it.
  if (size > 0 && reinterpret_cast<uintptr_t>(blob) % alignof(uint64_t) != 0) {
    blob_copy_.assign((size + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    std::memcpy(blob_copy_.data(), blob, size);
    blob = blob_copy_.data();
  }
  ET_UNWRAP(BlobView view, parse_blob(blob, size));
  ET_CHECK_OK_OR_RETURN_ERROR(
      load_graph(view, named_data_map, &compiled_.graph));
  ET_CHECK_OK_OR_RETURN_ERROR(refresh_output_sizes());
  threadpool_ = acquire_threadpool(num_threads);
  ET_CHECK_OK_OR_RETURN_ERROR(compile(&compiled_));
  // Built at the declared dims, so that a graph XNNPACK rejects fails here
  // rather than at the first call.
  ET_CHECK_OK_OR_RETURN_ERROR(build_runtimes(&compiled_, threadpool_.get()));
  compiled_.release_packed_constants();
  return Error::Ok;
}

Error XnnpackExecutor::refresh_output_sizes() {
  const Graph& graph = compiled_.graph;
  output_sizes_.resize(graph.outputs.size());
  for (size_t j = 0; j < graph.outputs.size(); ++j) {
    std::vector<int32_t>& sizes = output_sizes_[j];
    sizes.clear();
    for (size_t d : graph.values[graph.outputs[j]].dims) {
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

Error XnnpackExecutor::take_input_sizes(size_t j,
                                        const executorch::aten::Tensor& t) {
  ValueInfo& info = compiled_.graph.values[compiled_.graph.inputs[j]];
  if (is_scalar_for(t, info.max_dims)) {
    return Error::Ok;
  }
  const Dims& bounds = info.max_dims;
  ET_CHECK_OR_RETURN_ERROR(static_cast<size_t>(t.dim()) == bounds.size(),
                           InvalidArgument,
                           "XnnpackBackend input %zu: rank %zd, expected %zu",
                           j,
                           static_cast<ssize_t>(t.dim()),
                           bounds.size());
  for (size_t d = 0; d < bounds.size(); ++d) {
    const size_t size = static_cast<size_t>(t.size(d));
    // The buffers hold the declared dims (the upper bounds), no more.
    ET_CHECK_OR_RETURN_ERROR(size <= bounds[d],
                             InvalidArgument,
                             "XnnpackBackend input %zu: size %zd at dim %zu is "
                             "above its upper bound %zu",
                             j,
                             static_cast<ssize_t>(t.size(d)),
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

Error XnnpackExecutor::resize_outputs(Span<EValue*> args) {
  const Graph& graph = compiled_.graph;
  const size_t num_inputs = graph.inputs.size();
  for (size_t j = 0; j < graph.outputs.size(); ++j) {
    const auto& t = args[num_inputs + j]->toTensor();
    const Dims& dims = graph.values[graph.outputs[j]].dims;
    if (is_scalar_for(t, dims)) {
      continue;
    }
    const std::vector<int32_t>& sizes = output_sizes_[j];
    ET_CHECK_OK_OR_RETURN_ERROR(runtime::resize_tensor(
        t, runtime::ArrayRef<int32_t>(sizes.data(), sizes.size())));
    ET_CHECK_OR_RETURN_ERROR(
        static_cast<size_t>(t.dim()) == dims.size(),
        InvalidArgument,
        "XnnpackBackend output %zu: rank %zd, expected %zu",
        j,
        static_cast<ssize_t>(t.dim()),
        dims.size());
    for (size_t d = 0; d < dims.size(); ++d) {
      ET_CHECK_OR_RETURN_ERROR(
          static_cast<size_t>(t.size(d)) == dims[d],
          InvalidArgument,
          "XnnpackBackend output %zu: dim %zu is %zd, expected %zu",
          j,
          d,
          static_cast<ssize_t>(t.size(d)),
          dims[d]);
    }
  }
  return Error::Ok;
}

Error XnnpackExecutor::bind_args(Span<EValue*> args) {
  Graph& graph = compiled_.graph;
  const size_t num_inputs = graph.inputs.size();
  const size_t num_outputs = graph.outputs.size();
  ET_CHECK_OR_RETURN_ERROR(args.size() == num_inputs + num_outputs,
                           InvalidArgument,
                           "XnnpackBackend: %zu args, expected %zu inputs "
                           "then %zu outputs",
                           args.size(),
                           num_inputs,
                           num_outputs);
  auto what = [&](size_t k) { return k < num_inputs ? "input" : "output"; };
  auto index = [&](size_t k) { return k < num_inputs ? k : k - num_inputs; };
  auto value = [&](size_t k) {
    return k < num_inputs ? graph.inputs[k] : graph.outputs[k - num_inputs];
  };
  for (size_t k = 0; k < args.size(); ++k) {
    ET_CHECK_OR_RETURN_ERROR(args[k] != nullptr && args[k]->isTensor(),
                             InvalidArgument,
                             "XnnpackBackend %s %zu: not a tensor",
                             what(k),
                             index(k));
    const auto& t = args[k]->toTensor();
    const XNNDatatype datatype = graph.values[value(k)].datatype;
    ScalarType expected = ScalarType::Float;
    ET_CHECK_OR_RETURN_ERROR(
        arg_scalar_type(datatype, &expected) && t.scalar_type() == expected,
        InvalidArgument,
        "XnnpackBackend %s %zu: dtype %s, expected %s (graph datatype %s)",
        what(k),
        index(k),
        runtime::toString(t.scalar_type()),
        runtime::toString(expected),
        fb_xnnpack::EnumNameXNNDatatype(datatype));
  }
  // The inputs' sizes give every other value's.
  for (size_t j = 0; j < num_inputs; ++j) {
    ET_CHECK_OK_OR_RETURN_ERROR(take_input_sizes(j, args[j]->toTensor()));
  }
  if (shape_stale_) {
    ET_CHECK_OK_OR_RETURN_ERROR(infer_dims(&graph));
    ET_CHECK_OK_OR_RETURN_ERROR(refresh_output_sizes());
    ET_CHECK_OK_OR_RETURN_ERROR(build_runtimes(&compiled_, threadpool_.get()));
    shape_stale_ = false;
  }
  ET_CHECK_OK_OR_RETURN_ERROR(resize_outputs(args));
  staging_.resize(args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    const auto& t = args[k]->toTensor();
    ET_CHECK_OR_RETURN_ERROR(t.mutable_data_ptr() != nullptr,
                             InvalidArgument,
                             "XnnpackBackend %s %zu: no data",
                             what(k),
                             index(k));
    void* data = t.mutable_data_ptr();
    if (!runtime::tensor_is_contiguous(t)) {
      // XNNPACK's values are row-major; this arg is laid out otherwise.
      staging_[k].resize(std::max<size_t>(t.nbytes(), 1));
      data = staging_[k].data();
      if (k < num_inputs) {
        copy_layout(t,
                    staging_[k].data(),
                    /*into_tensor=*/false,
                    &staging_dims_,
                    threadpool_.get());
      }
    }
    compiled_.data[value(k)] = data;
  }
  return Error::Ok;
}

Error XnnpackExecutor::run_step(Step& step, const HostContext& host) {
  if (step.view) {
    return Error::Ok;
  }
  if (step.fusion != nullptr) {
    return run_fusion(*step.fusion, host);
  }
  if (step.on_host) {
    const Node& node = compiled_.graph.nodes[step.first_node];
    return node.host_run != nullptr ? node.host_run(host, node)
                                    : node.ops->run(host, node);
  }
  if (step.operator_step) {
    return run_operator_step(&compiled_, &step, threadpool_.get());
  }
  {
    // Setting up a runtime is cheap but not free; the planned memory of a
    // method usually hands the same pointers every time.
    bool changed = !step.set_up;
    for (xnn_external_value& external : step.externals) {
      changed |= external.data != compiled_.data[external.id];
      external.data = compiled_.data[external.id];
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
  }
  return Error::Ok;
}

Error XnnpackExecutor::execute(Span<EValue*> args,
                               runtime::EventTracer* event_tracer) {
  ET_CHECK_OK_OR_RETURN_ERROR(bind_args(args));
  const HostContext host{
      compiled_.graph, compiled_.data.data(), threadpool_.get()};
  for (Step& step : compiled_.steps) {
    const runtime::EventTracerEntry event =
        runtime::event_tracer_start_profiling_delegate(
            event_tracer, step.event_name.c_str(), runtime::kUnsetDebugHandle);
    const Error error = run_step(step, host);
    runtime::event_tracer_end_profiling_delegate(event_tracer, event);
    ET_CHECK_OK_OR_RETURN_ERROR(error);
  }
  const size_t num_inputs = compiled_.graph.inputs.size();
  for (size_t k = num_inputs; k < args.size(); ++k) {
    const auto& t = args[k]->toTensor();
    if (!runtime::tensor_is_contiguous(t)) {
      copy_layout(t,
                  staging_[k].data(),
                  /*into_tensor=*/true,
                  &staging_dims_,
                  threadpool_.get());
    }
  }
  return Error::Ok;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
