#pragma once

// The calls the runtime makes into an EventTracer, each a no-op when the
// tracer is null. Built with ET_EVENT_TRACER_ENABLED (CMake option
// EXECUTORCH_ENABLE_EVENT_TRACER, on except in size-optimized builds); without
// it every hook compiles to nothing.

#include <executorch/runtime/core/event_tracer.h>

namespace executorch {
namespace runtime {
namespace internal {

// Times the enclosing scope as one event, when the profiling level includes
// per-operator events.
class EventTracerProfileOpScope final {
 public:
  EventTracerProfileOpScope(EventTracer* event_tracer, const char* name) {
#ifdef ET_EVENT_TRACER_ENABLED
    if (event_tracer != nullptr &&
        event_tracer->event_tracer_profiling_level() >
            EventTracerProfilingLevel::kProfileMethodOnly) {
      event_tracer_ = event_tracer;
      entry_ = event_tracer->start_profiling(name);
    }
#else
    (void)event_tracer;
    (void)name;
#endif
  }
  ~EventTracerProfileOpScope() {
#ifdef ET_EVENT_TRACER_ENABLED
    if (event_tracer_ != nullptr) {
      event_tracer_->end_profiling(entry_);
    }
#endif
  }
  EventTracerProfileOpScope(const EventTracerProfileOpScope&) = delete;
  EventTracerProfileOpScope& operator=(const EventTracerProfileOpScope&) =
      delete;

 private:
#ifdef ET_EVENT_TRACER_ENABLED
  EventTracer* event_tracer_ = nullptr;
  EventTracerEntry entry_{};
#endif
};

using EventTracerProfileScope = EventTracerProfileOpScope;

// Times the enclosing scope as one event at every profiling level (method
// load and execute).
class EventTracerProfileMethodScope final {
 public:
  EventTracerProfileMethodScope(EventTracer* event_tracer, const char* name) {
#ifdef ET_EVENT_TRACER_ENABLED
    if (event_tracer != nullptr) {
      event_tracer_ = event_tracer;
      entry_ = event_tracer->start_profiling(name);
    }
#else
    (void)event_tracer;
    (void)name;
#endif
  }
  ~EventTracerProfileMethodScope() {
#ifdef ET_EVENT_TRACER_ENABLED
    if (event_tracer_ != nullptr) {
      event_tracer_->end_profiling(entry_);
    }
#endif
  }
  EventTracerProfileMethodScope(const EventTracerProfileMethodScope&) = delete;
  EventTracerProfileMethodScope& operator=(
      const EventTracerProfileMethodScope&) = delete;

 private:
#ifdef ET_EVENT_TRACER_ENABLED
  EventTracer* event_tracer_ = nullptr;
  EventTracerEntry entry_{};
#endif
};

// Marks the instruction being run for the events recorded in the enclosing
// scope: its chain and its index (the debug handle the ahead-of-time debug
// handle map is keyed by).
class EventTracerProfileInstructionScope final {
 public:
  EventTracerProfileInstructionScope(EventTracer* event_tracer,
                                     ChainID chain_idx,
                                     DebugHandle debug_handle) {
#ifdef ET_EVENT_TRACER_ENABLED
    event_tracer_ = event_tracer;
    if (event_tracer_ != nullptr) {
      event_tracer_->set_chain_debug_handle(chain_idx, debug_handle);
    }
#else
    (void)event_tracer;
    (void)chain_idx;
    (void)debug_handle;
#endif
  }
  ~EventTracerProfileInstructionScope() {
#ifdef ET_EVENT_TRACER_ENABLED
    if (event_tracer_ != nullptr) {
      event_tracer_->set_chain_debug_handle(kUnsetChainId, kUnsetDebugHandle);
    }
#endif
  }
  EventTracerProfileInstructionScope(
      const EventTracerProfileInstructionScope&) = delete;
  EventTracerProfileInstructionScope& operator=(
      const EventTracerProfileInstructionScope&) = delete;

 private:
#ifdef ET_EVENT_TRACER_ENABLED
  EventTracer* event_tracer_ = nullptr;
#endif
};

inline bool event_tracer_enabled() {
#ifdef ET_EVENT_TRACER_ENABLED
  return true;
#else
  return false;
#endif
}

inline void event_tracer_create_event_block(EventTracer* event_tracer,
                                            const char* name) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    event_tracer->create_event_block(name);
  }
#else
  (void)event_tracer;
  (void)name;
#endif
}

inline EventTracerEntry event_tracer_begin_profiling_event(
    EventTracer* event_tracer, const char* name) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    return event_tracer->start_profiling(name);
  }
#else
  (void)event_tracer;
  (void)name;
#endif
  return EventTracerEntry{};
}

inline void event_tracer_end_profiling_event(EventTracer* event_tracer,
                                             EventTracerEntry event) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    event_tracer->end_profiling(event);
  }
#else
  (void)event_tracer;
  (void)event;
#endif
}

inline AllocatorID event_tracer_track_allocator(EventTracer* event_tracer,
                                                const char* name) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    return event_tracer->track_allocator(name);
  }
#else
  (void)event_tracer;
  (void)name;
#endif
  return 0;
}

inline void event_tracer_track_allocation(EventTracer* event_tracer,
                                          AllocatorID id,
                                          size_t size) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    event_tracer->track_allocation(id, size);
  }
#else
  (void)event_tracer;
  (void)id;
  (void)size;
#endif
}

// Logs an instruction's result when the debug level asks for intermediate
// outputs.
inline void event_tracer_log_evalue(EventTracer* event_tracer,
                                    const EValue& evalue) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr &&
      event_tracer->event_tracer_debug_level() >=
          EventTracerDebugLogLevel::kIntermediateOutputs) {
    (void)event_tracer->log_evalue(evalue,
                                   LoggedEValueType::kIntermediateOutput);
  }
#else
  (void)event_tracer;
  (void)evalue;
#endif
}

// Logs a method output when the debug level asks for program outputs.
inline void event_tracer_log_evalue_output(EventTracer* event_tracer,
                                           const EValue& evalue) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr &&
      event_tracer->event_tracer_debug_level() >=
          EventTracerDebugLogLevel::kProgramOutputs) {
    (void)event_tracer->log_evalue(evalue, LoggedEValueType::kProgramOutput);
  }
#else
  (void)event_tracer;
  (void)evalue;
#endif
}

inline void event_tracer_set_bundled_input_index(EventTracer* event_tracer,
                                                 int bundled_input_index) {
#ifdef ET_EVENT_TRACER_ENABLED
  if (event_tracer != nullptr) {
    event_tracer->set_bundled_input_index(bundled_input_index);
  }
#else
  (void)event_tracer;
  (void)bundled_input_index;
#endif
}

} // namespace internal
} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
namespace internal {
using ::executorch::runtime::internal::event_tracer_begin_profiling_event;
using ::executorch::runtime::internal::event_tracer_create_event_block;
using ::executorch::runtime::internal::event_tracer_end_profiling_event;
using ::executorch::runtime::internal::event_tracer_log_evalue;
using ::executorch::runtime::internal::event_tracer_log_evalue_output;
using ::executorch::runtime::internal::event_tracer_set_bundled_input_index;
using ::executorch::runtime::internal::event_tracer_track_allocation;
using ::executorch::runtime::internal::event_tracer_track_allocator;
using ::executorch::runtime::internal::EventTracerProfileInstructionScope;
using ::executorch::runtime::internal::EventTracerProfileMethodScope;
using ::executorch::runtime::internal::EventTracerProfileOpScope;
using ::executorch::runtime::internal::EventTracerProfileScope;
} // namespace internal
} // namespace executor
} // namespace torch
