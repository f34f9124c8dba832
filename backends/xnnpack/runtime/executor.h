#pragma once

// One delegate's executable form. init() reads and checks the blob
// (graph.h), compiles it (compiler.h: steps, arena, XNNPACK runtimes);
// execute() binds the args, sets up each runtime only when a pointer
// changed, and runs the steps.
//
// Dynamic shapes: an input may be smaller than its declared dims (the upper
// bounds) in any dim. When the inputs' sizes differ from those the runtimes
// were built for, execute() recomputes every value's dims (infer_dims),
// builds the runtimes anew and resizes the outputs; calls at the same sizes
// reuse them.
//
// Threading: init and execute of one executor must not run concurrently;
// different executors may, sharing a threadpool.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/backends/xnnpack/runtime/compiler.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#include <executorch/backends/xnnpack/runtime/threadpool.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/span.h>

namespace executorch {
namespace backends {
namespace xnnpack {

class XnnpackExecutor final {
 public:
  XnnpackExecutor() = default;
  XnnpackExecutor(const XnnpackExecutor&) = delete;
  XnnpackExecutor& operator=(const XnnpackExecutor&) = delete;

  // `blob` must stay valid until the executor is destroyed (the graph's
  // params and constants are read in place unless it had to be copied).
  // `named_data_map` (may be null) is only used during init: buffers taken
  // from it are kept, except those of weights packed into fully connected
  // operators, which are freed at the end of init. `num_threads` 0 means the
  // process default.
  ET_NODISCARD runtime::Error init(const void* blob,
                                   size_t size,
                                   const runtime::NamedDataMap* named_data_map,
                                   size_t num_threads);

  // `args`: the inputs, then the outputs (resized to the dims the inputs'
  // sizes give).
  // `event_tracer` (may be null) gets one delegate event per step, named by
  // its nodes.
  ET_NODISCARD runtime::Error execute(runtime::Span<runtime::EValue*> args,
                                      runtime::EventTracer* event_tracer);

  // The graph's outputs: the trailing args execute() writes.
  size_t num_outputs() const {
    return compiled_.graph.outputs.size();
  }

 private:
  runtime::Error refresh_output_sizes();
  runtime::Error bind_args(runtime::Span<runtime::EValue*> args);
  // Checks input j's sizes against its declared dims and takes them.
  runtime::Error take_input_sizes(size_t j, const executorch::aten::Tensor& t);
  runtime::Error resize_outputs(runtime::Span<runtime::EValue*> args);
  runtime::Error run_step(Step& step, const HostContext& host);

  // A copy of the blob when it cannot be used in place.
  std::vector<uint64_t> blob_copy_;
  CompiledGraph compiled_;
  // Output args' sizes, as the tensors take them.
  std::vector<std::vector<int32_t>> output_sizes_;
  // An input's sizes changed since the runtimes were built (or their
  // rebuild failed).
  bool shape_stale_ = false;
  // Per arg: the row-major buffer XNNPACK reads or writes in place of an
  // arg in another dim order (a channels-last input or output), copied
  // from it before the steps or to it after them. Empty for the others;
  // grown, never shrunk, so a steady state allocates nothing.
  std::vector<std::vector<uint8_t>> staging_;
  // The dims a staging copy gathers (scratch, kept for its capacity).
  Dims staging_dims_;
  Threadpool threadpool_;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
