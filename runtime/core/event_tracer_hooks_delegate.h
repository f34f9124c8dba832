#pragma once

// Hooks for backends: report events inside a delegated subgraph through the
// EventTracer of the BackendExecutionContext (context.event_tracer()), which
// is null when the caller traces nothing. Identify each event by the name or
// integer id the backend's ahead-of-time delegate map uses, so tools can map
// it back to graph nodes.

#include <executorch/runtime/core/event_tracer.h>

namespace executorch {
namespace runtime {

inline EventTracerEntry event_tracer_start_profiling_delegate(
    EventTracer* event_tracer,
    const char* name,
    DebugHandle delegate_debug_id) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    return event_tracer->start_profiling_delegate(
        name, static_cast<DelegateDebugIntId>(delegate_debug_id));
  }
#else
  (void)event_tracer;
  (void)name;
  (void)delegate_debug_id;
#endif
  return EventTracerEntry{};
}

inline void event_tracer_end_profiling_delegate(
    EventTracer* event_tracer,
    EventTracerEntry event_tracer_entry,
    const void* metadata = nullptr,
    size_t metadata_len = 0) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    event_tracer->end_profiling_delegate(
        event_tracer_entry, metadata, metadata_len);
  }
#else
  (void)event_tracer;
  (void)event_tracer_entry;
  (void)metadata;
  (void)metadata_len;
#endif
}

inline void event_tracer_log_profiling_delegate(EventTracer* event_tracer,
                                                const char* name,
                                                DebugHandle delegate_debug_id,
                                                et_timestamp_t start_time,
                                                et_timestamp_t end_time,
                                                const void* metadata = nullptr,
                                                size_t metadata_len = 0) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    event_tracer->log_profiling_delegate(
        name,
        static_cast<DelegateDebugIntId>(delegate_debug_id),
        start_time,
        end_time,
        metadata,
        metadata_len);
  }
#else
  (void)event_tracer;
  (void)name;
  (void)delegate_debug_id;
  (void)start_time;
  (void)end_time;
  (void)metadata;
  (void)metadata_len;
#endif
}

// Logs a value the delegate computed (a Tensor, ArrayRef<Tensor>, int, bool
// or double) when the debug level asks for intermediate outputs.
template <typename T>
inline void event_tracer_log_output_delegate(EventTracer* event_tracer,
                                             const char* name,
                                             DebugHandle delegate_debug_id,
                                             const T& output) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr &&
      event_tracer->event_tracer_debug_level() >=
          EventTracerDebugLogLevel::kIntermediateOutputs) {
    (void)event_tracer->log_intermediate_output_delegate(
        name, static_cast<DelegateDebugIntId>(delegate_debug_id), output);
  }
#else
  (void)event_tracer;
  (void)name;
  (void)delegate_debug_id;
  (void)output;
#endif
}

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::event_tracer_end_profiling_delegate;
using ::executorch::runtime::event_tracer_log_output_delegate;
using ::executorch::runtime::event_tracer_log_profiling_delegate;
using ::executorch::runtime::event_tracer_start_profiling_delegate;
} // namespace executor
} // namespace torch
