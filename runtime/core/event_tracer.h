#pragma once

// EventTracer: the interface through which the runtime reports what it does
// while loading and running a method: profiling events (a name and start/end
// timestamps from the PAL's tick counter), delegate events, allocations and,
// depending on the debug level, the values instructions produce.
//
// The runtime never requires one: Program::load_method and Module take an
// optional EventTracer*, and with none given each hook is a single null
// check. devtools/etdump/etdump_gen.h implements it by recording upstream's
// ETDump format into a caller-owned buffer; a user may implement it to
// stream events elsewhere.
//
// Names passed to any method are only valid during the call: implementations
// copy what they keep. An EventTracer is used by one thread at a time (the
// thread running the Method it was given to).
//
// Tested by devtools/etdump/etdump_gen_test.cpp and
// runtime/executor/method_event_tracer_test.cpp.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/array_ref.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/platform/platform.h>

namespace executorch {
namespace runtime {

typedef uint32_t AllocatorID;
typedef int32_t ChainID;
// For events of the executor, the index of the instruction in its chain.
typedef uint32_t DebugHandle;
// A delegate's own identifier for an event inside its subgraph; the
// ahead-of-time delegate map relates it to graph nodes.
typedef int32_t DelegateDebugIntId;

constexpr ChainID kUnsetChainId = -1;
constexpr DebugHandle kUnsetDebugHandle = 0;
constexpr DelegateDebugIntId kUnsetDelegateDebugIntId = -1;
constexpr int kUnsetBundledInputIndex = -1;

// Which kind of identifier a delegate event carries.
enum class DelegateDebugIdType {
  kNone,
  kInt,
  kStr,
};

enum class LoggedEValueType {
  // The result of one instruction.
  kIntermediateOutput = 0,
  // An output of the method.
  kProgramOutput = 1,
};

// Which values the runtime hands to log_evalue(), in increasing amounts.
enum class EventTracerDebugLogLevel {
  kNoLogging,
  kProgramOutputs,
  kIntermediateOutputs,
};

// Which profiling events the runtime reports, in increasing amounts.
enum class EventTracerProfilingLevel {
  // Method load and execute only.
  kProfileMethodOnly,
  // Also each instruction and delegate event.
  kProfileAllEvents,
};

// Decides which delegate intermediate outputs are logged.
class EventTracerFilterBase {
 public:
  // True to log the event named `name` (or, when name is null, identified by
  // `delegate_debug_index`).
  virtual Result<bool> filter(const char* name,
                              DelegateDebugIntId delegate_debug_index) = 0;
  virtual ~EventTracerFilterBase() = default;
};

// What start_profiling*() returns and end_profiling*() takes back.
struct EventTracerEntry {
  int64_t event_id;
  ChainID chain_id;
  DebugHandle debug_handle;
  et_timestamp_t start_time;
  DelegateDebugIdType delegate_event_id_type;
};

class EventTracer {
 public:
  // Starts a group of events, e.g. one execution of a method. Later events
  // belong to it until the next call.
  virtual void create_event_block(const char* name) = 0;

  // Starts timing an event. With kUnsetChainId/kUnsetDebugHandle the values
  // last given to set_chain_debug_handle() are recorded with it.
  virtual EventTracerEntry start_profiling(
      const char* name,
      ChainID chain_id = kUnsetChainId,
      DebugHandle debug_handle = kUnsetDebugHandle) = 0;

  // Ends the event `prof_entry` came from; its end time is now.
  virtual void end_profiling(EventTracerEntry prof_entry) = 0;

  // Starts timing an event inside a delegate, identified by `name` (the
  // string identifier from the delegate map; null when ids are integers) or
  // by `delegate_debug_index`.
  virtual EventTracerEntry start_profiling_delegate(
      const char* name, DelegateDebugIntId delegate_debug_index) = 0;

  // Ends a delegate event; `metadata` (any bytes, copied) is kept with it.
  virtual void end_profiling_delegate(EventTracerEntry event_tracer_entry,
                                      const void* metadata = nullptr,
                                      size_t metadata_len = 0) = 0;

  // Records a finished delegate event in one call, for delegates that learn
  // their timings after the fact.
  virtual void log_profiling_delegate(const char* name,
                                      DelegateDebugIntId delegate_debug_index,
                                      et_timestamp_t start_time,
                                      et_timestamp_t end_time,
                                      const void* metadata = nullptr,
                                      size_t metadata_len = 0) = 0;

  // Registers an allocator whose allocations will be tracked.
  virtual AllocatorID track_allocator(const char* name) = 0;
  // Records an allocation of `size` bytes from allocator `id`.
  virtual void track_allocation(AllocatorID id, size_t size) = 0;

  // Records a value (with the current chain and debug handle). Returns
  // whether it was recorded.
  virtual Result<bool> log_evalue(const EValue& evalue,
                                  LoggedEValueType evalue_type) = 0;

  // Record a value a delegate computed for the event `name` or
  // `delegate_debug_index`. Return false when the filter rejected it.
  virtual Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const executorch::aten::Tensor& output) = 0;
  virtual Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const ArrayRef<executorch::aten::Tensor> output) = 0;
  virtual Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const int& output) = 0;
  virtual Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const bool& output) = 0;
  virtual Result<bool> log_intermediate_output_delegate(
      const char* name,
      DelegateDebugIntId delegate_debug_index,
      const double& output) = 0;

  // The filter consulted by log_intermediate_output_delegate (not owned).
  virtual void set_delegation_intermediate_output_filter(
      EventTracerFilterBase* event_tracer_filter) = 0;

  // The instruction being run: recorded with events that do not name one.
  void set_chain_debug_handle(ChainID chain_id, DebugHandle debug_handle) {
    chain_id_ = chain_id;
    debug_handle_ = debug_handle;
  }
  ChainID current_chain_id() {
    return chain_id_;
  }
  DebugHandle current_debug_handle() {
    return debug_handle_;
  }

  // Which test case of a bundled program the next block runs.
  void set_bundled_input_index(int bundled_input_index) {
    bundled_input_index_ = bundled_input_index;
  }
  int bundled_input_index() {
    return bundled_input_index_;
  }

  void set_event_tracer_debug_level(EventTracerDebugLogLevel log_level) {
    event_tracer_debug_level_ = log_level;
  }
  EventTracerDebugLogLevel event_tracer_debug_level() {
    return event_tracer_debug_level_;
  }

  void set_event_tracer_profiling_level(
      EventTracerProfilingLevel profiling_level) {
    event_tracer_profiling_level_ = profiling_level;
  }
  EventTracerProfilingLevel event_tracer_profiling_level() {
    return event_tracer_profiling_level_;
  }

  bool intermediate_outputs_logging_status() {
    return log_intermediate_tensors_;
  }

  virtual ~EventTracer() {}

 protected:
  ChainID chain_id_ = kUnsetChainId;
  DebugHandle debug_handle_ = kUnsetDebugHandle;
  bool log_intermediate_tensors_ = false;
  int bundled_input_index_ = kUnsetBundledInputIndex;
  EventTracerDebugLogLevel event_tracer_debug_level_ =
      EventTracerDebugLogLevel::kNoLogging;
  EventTracerProfilingLevel event_tracer_profiling_level_ =
      EventTracerProfilingLevel::kProfileAllEvents;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::AllocatorID;
using ::executorch::runtime::ChainID;
using ::executorch::runtime::DebugHandle;
using ::executorch::runtime::DelegateDebugIdType;
using ::executorch::runtime::DelegateDebugIntId;
using ::executorch::runtime::EventTracer;
using ::executorch::runtime::EventTracerDebugLogLevel;
using ::executorch::runtime::EventTracerEntry;
using ::executorch::runtime::kUnsetBundledInputIndex;
using ::executorch::runtime::kUnsetChainId;
using ::executorch::runtime::kUnsetDebugHandle;
using ::executorch::runtime::kUnsetDelegateDebugIntId;
using ::executorch::runtime::LoggedEValueType;
} // namespace executor
} // namespace torch
