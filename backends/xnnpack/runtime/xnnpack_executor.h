#pragma once

// One delegate's executable form. init() checks the blob, splits its nodes
// into steps (maximal runs of nodes XNNPACK runs, each one xnn_runtime with
// its weights packed once, and single host nodes between them), and
// allocates the buffers of values that cross steps, sized for the declared
// dims (the upper bounds of a graph with dynamic inputs). execute() binds the
// args, sets up each runtime only when a pointer changed, and runs the steps.
//
// Dynamic inputs: this XNNPACK cannot reshape a runtime, so when an input's
// sizes differ from those the runtimes were built for, execute() recomputes
// every value's dims (infer_dims) and defines and creates the runtimes anew
// (repacking their weights); calls at the same sizes reuse them.
//
// Threading: init and execute of one executor must not run concurrently;
// different executors may, sharing a threadpool.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/blob.h>
#include <executorch/backends/xnnpack/runtime/graph_check.h>
#include <executorch/backends/xnnpack/runtime/threadpool.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/span.h>

namespace executorch {
namespace backends {
namespace xnnpack {

class XnnpackExecutor final {
 public:
  XnnpackExecutor() = default;
  ~XnnpackExecutor();
  XnnpackExecutor(const XnnpackExecutor&) = delete;
  XnnpackExecutor& operator=(const XnnpackExecutor&) = delete;

  // `blob` must stay valid until the executor is destroyed (its constants
  // are used in place unless it had to be copied). `num_threads` 0 means the
  // process default.
  ET_NODISCARD runtime::Error init(const void* blob,
                                   size_t size,
                                   size_t num_threads);

  // `args`: the inputs, then the outputs (resized to the dims the inputs'
  // sizes give). `event_tracer` (may be null) gets one delegate event per
  // step, named by its nodes: this XNNPACK cannot time single operators.
  ET_NODISCARD runtime::Error execute(runtime::Span<runtime::EValue*> args,
                                      runtime::EventTracer* event_tracer);

 private:
  struct Step {
    size_t first_node = 0;
    size_t end_node = 0;
    // A host step runs one node with host_ops; the others an xnn_runtime.
    bool on_host = false;
    xnn_runtime_t runtime = nullptr;
    bool set_up = false;
    // The runtime's external values; data refreshed from data_ per execute.
    std::vector<xnn_external_value> externals;
    // Its profiling event's name: "XNNPACK nodes 0-41" or "host Kind node 7".
    std::string event_name;
  };

  // Runs one step inside its profiling event.
  runtime::Error run_step(Step& step, runtime::EventTracer* event_tracer);
  runtime::Error run_step_untraced(Step& step);
  runtime::Error plan_steps();
  // Allocates arena_ and sets each arena value's offset in it.
  runtime::Error plan_arena(std::vector<size_t>* offsets);
  // (Re)creates the runtime of every XNNPACK step at the current dims.
  runtime::Error build_runtimes();
  runtime::Error create_runtime(Step* step);
  runtime::Error define_node(xnn_subgraph_t subgraph, size_t node_index);
  runtime::Error refresh_output_sizes();
  runtime::Error bind_args(runtime::Span<runtime::EValue*> args);
  // Checks input j's sizes against the graph's and takes its dynamic ones.
  runtime::Error take_input_sizes(size_t j, const executorch::aten::Tensor& t);
  // Recomputes the dims and rebuilds the runtimes for new input sizes.
  runtime::Error resize_graph();

  const xnnpack_graph::Graph* graph_ = nullptr;
  // A copy of the blob when it cannot be used in place.
  std::vector<uint8_t> blob_copy_;
  CheckedGraph checked_;
  // Node index that produces each value (SIZE_MAX if none).
  std::vector<size_t> producer_;
  // Step index of each node.
  std::vector<size_t> node_step_;
  // True for values exchanged between steps through memory: args, and
  // intermediates in arena_.
  std::vector<bool> crosses_steps_;
  std::vector<Step> steps_;
  // Memory of each value this executor reads or writes (null for values
  // internal to one XNNPACK runtime).
  std::vector<void*> data_;
  std::unique_ptr<uint8_t[]> arena_;
  // Output args' sizes, as the tensors take them.
  std::vector<std::vector<int32_t>> output_sizes_;
  // An input's sizes changed since the runtimes were built (or their
  // rebuild failed).
  bool shape_stale_ = false;
  Threadpool threadpool_;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
