#pragma once

// Compiling a checked graph (graph.h) into what execute() runs: the nodes
// split into steps, each maximal run of kinds XNNPACK defines becoming one
// xnn_runtime (its weights packed once, when it is created) and each host
// kind a step of its own (or a fused run of nodes, fusion.h); reshapes and
// copies between intermediates become views (their output shares their
// input's memory, nothing runs) rather than XNNPACK copy operators; and the memory of the values passed between
// steps, in one arena where values whose step lifetimes do not overlap
// share bytes. Binding args and running the steps is executor.h's job.
//
// Dynamic shapes: Debian's 2022 XNNPACK cannot reshape a runtime, so after
// infer_dims() changes the dims, build_runtimes() defines and creates every
// XNNPACK step anew. Repacking weights on every change of size (an LLM's
// prompt, then each decoded token) would cost more than the products, so an
// fp32 fully connected node is a step of its own run through XNNPACK's
// operator API instead: its weights are packed once, at init, and each call
// only sets the operator up for its batch (rows). Its unpacked weights are
// then not needed any more (release_packed_constants).
//
// Threading: a CompiledGraph is used by one thread at a time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pthreadpool.h>
#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/fusion.h>
#include <executorch/backends/xnnpack/runtime/graph.h>

namespace executorch {
namespace backends {
namespace xnnpack {

struct Step {
  size_t first_node = 0;
  size_t end_node = 0;
  // A host step runs one node with its NodeOps::run, or a fused run of
  // nodes (fusion.h); an operator step one fp32 fully connected node with
  // `op`; the others an xnn_runtime.
  bool on_host = false;
  const Fusion* fusion = nullptr;
  bool operator_step = false;
  // A host step over a reshape or copy whose output shares its input's
  // memory: nothing to run.
  bool view = false;
  xnn_runtime_t runtime = nullptr;
  xnn_operator_t op = nullptr;
  // What `op` was last set up for (setup is skipped when unchanged).
  size_t op_batch = 0;
  const void* op_input = nullptr;
  void* op_output = nullptr;
  // The runtime's external values; their data is refreshed from
  // CompiledGraph::data before each run, and setup skipped when unchanged.
  std::vector<xnn_external_value> externals;
  bool set_up = false;
  // Its profiling event's name: "XNNPACK nodes 0-41", "host tanh node 7" or
  // "host layer_norm nodes 8-15" (this XNNPACK cannot time single
  // operators).
  std::string event_name;
};

class CompiledGraph final {
 public:
  CompiledGraph() = default;
  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  Graph graph;
  // The fused runs of nodes, each one host step (steps point into it).
  std::vector<Fusion> fusions;
  std::vector<Step> steps;
  // Memory of each value the executor reads or writes: constants, the
  // arena's intermediates, and (bound per call) the args. Null for values
  // internal to one XNNPACK runtime.
  std::vector<void*> data;

  // Frees the bytes of constants that only operator steps read (packed
  // into their operators at init); their data becomes null.
  void release_packed_constants();

 private:
  friend runtime::Error compile(CompiledGraph* compiled);
  friend runtime::Error build_runtimes(CompiledGraph* compiled,
                                       pthreadpool_t pool);

  runtime::Error plan_steps();
  runtime::Error plan_arena();
  runtime::Error create_runtime(Step* step, pthreadpool_t pool);
  runtime::Error create_operator(Step* step);
  void delete_runtimes();

  // Node index that produces each value (SIZE_MAX if none).
  std::vector<size_t> producer_;
  // Step index of each node.
  std::vector<size_t> node_step_;
  // The value whose memory each value uses: itself, or for the output of
  // a view step, its input's (transitively).
  std::vector<uint32_t> memory_of_;
  // Values exchanged between steps through memory: args, and the
  // intermediates in arena_.
  std::vector<bool> crosses_steps_;
  std::unique_ptr<uint8_t[]> arena_;
};

// Plans the steps and the arena of `compiled->graph` (already loaded).
// Errors: MemoryAllocationFailed when the arena does not fit in memory.
runtime::Error compile(CompiledGraph* compiled);

// The pool an XNNPACK runtime over graph.nodes[first, end) runs on: null
// (the calling thread) when each node only streams its values once (adds,
// subtractions, multiplications, minimum, maximum, clamps, converts, copies,
// global average pooling) and they total under kMinParallelStreamElements
// (host_util.h) at the current dims, else `pool`.
pthreadpool_t runtime_pool(const Graph& graph,
                           size_t first,
                           size_t end,
                           pthreadpool_t pool);

// (Re)creates every XNNPACK step's runtime at the graph's current dims, on
// runtime_pool(), and the operator of each operator step that has none
// yet.
// Errors: InvalidProgram naming the node XNNPACK rejects.
runtime::Error build_runtimes(CompiledGraph* compiled, pthreadpool_t pool);

// Sets `step`'s operator up for the current dims and the memory in
// `compiled->data` (when either changed), then runs it on `pool`.
runtime::Error run_operator_step(CompiledGraph* compiled,
                                 Step* step,
                                 pthreadpool_t pool);

// XNNPACK's name for `status`, for log lines.
const char* status_name(xnn_status status);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
