// What a Method reports to an EventTracer: load and execute events, one
// OPERATOR_CALL and one native_call_<op> event per kernel call carrying its
// instruction index, DELEGATE_CALL events and the delegate's own events
// (reached through the BackendExecutionContext), and logged values by debug
// level.

#include <executorch/runtime/executor/method.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/event_tracer_hooks_delegate.h>
#include <executorch/runtime/testing/method_harness.h>
#include <executorch/runtime/testing/owned_tensor.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;
using executorch::aten::Tensor;

namespace {

struct Recorded {
  std::string block; // the block it was recorded in
  std::string name;  // profile events; "value" for logged values
  ChainID chain;
  DebugHandle handle;
  DelegateDebugIntId delegate_id = kUnsetDelegateDebugIntId;
  LoggedEValueType value_type = LoggedEValueType::kIntermediateOutput;
  EValue value; // refers to the method's memory: read before the next run
};

// Keeps every event in order of completion.
class RecordingTracer final : public EventTracer {
 public:
  void create_event_block(const char* name) override {
    block_ = name;
  }
  EventTracerEntry start_profiling(const char* name,
                                   ChainID chain_id,
                                   DebugHandle debug_handle) override {
    names_.push_back(name);
    EventTracerEntry entry{};
    entry.event_id = static_cast<int64_t>(names_.size() - 1);
    entry.chain_id = chain_id == kUnsetChainId ? chain_id_ : chain_id;
    entry.debug_handle =
        debug_handle == kUnsetDebugHandle ? debug_handle_ : debug_handle;
    return entry;
  }
  void end_profiling(EventTracerEntry entry) override {
    events.push_back(
        {block_, names_[entry.event_id], entry.chain_id, entry.debug_handle});
  }
  EventTracerEntry start_profiling_delegate(
      const char* name, DelegateDebugIntId delegate_debug_index) override {
    EventTracerEntry entry{};
    entry.event_id = delegate_debug_index;
    entry.chain_id = chain_id_;
    entry.debug_handle = debug_handle_;
    return entry;
  }
  void end_profiling_delegate(EventTracerEntry entry,
                              const void*,
                              size_t) override {
    Recorded event{
        block_, "delegate event", entry.chain_id, entry.debug_handle};
    event.delegate_id = static_cast<DelegateDebugIntId>(entry.event_id);
    events.push_back(event);
  }
  void log_profiling_delegate(const char*,
                              DelegateDebugIntId,
                              et_timestamp_t,
                              et_timestamp_t,
                              const void*,
                              size_t) override {}
  AllocatorID track_allocator(const char*) override {
    return 0;
  }
  void track_allocation(AllocatorID, size_t) override {}
  Result<bool> log_evalue(const EValue& evalue,
                          LoggedEValueType type) override {
    Recorded event{block_, "value", chain_id_, debug_handle_};
    event.value_type = type;
    event.value = evalue;
    events.push_back(event);
    return true;
  }
  Result<bool> log_intermediate_output_delegate(const char*,
                                                DelegateDebugIntId,
                                                const Tensor&) override {
    return false;
  }
  Result<bool> log_intermediate_output_delegate(
      const char*, DelegateDebugIntId, const ArrayRef<Tensor>) override {
    return false;
  }
  Result<bool> log_intermediate_output_delegate(const char*,
                                                DelegateDebugIntId,
                                                const int&) override {
    return false;
  }
  Result<bool> log_intermediate_output_delegate(const char*,
                                                DelegateDebugIntId,
                                                const bool&) override {
    return false;
  }
  Result<bool> log_intermediate_output_delegate(const char*,
                                                DelegateDebugIntId,
                                                const double&) override {
    return false;
  }
  void set_delegation_intermediate_output_filter(
      EventTracerFilterBase*) override {}

  std::vector<std::string> names_in(const std::string& block) const {
    std::vector<std::string> found;
    for (const Recorded& event : events) {
      if (event.block == block) {
        found.push_back(event.name);
      }
    }
    return found;
  }

  std::vector<Recorded> events;

 private:
  std::string block_ = "(none)";
  std::vector<std::string> names_;
};

class MethodEventTracerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }

  void run(EventTracer* tracer) {
    ASSERT_EQ(
        harness_.load(two_kernel_program(), "forward", std::nullopt, tracer),
        Error::Ok);
    OwnedTensor x = float_tensor({2}, {1, 2});
    ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
    ASSERT_EQ(harness_.method().execute(), Error::Ok);
  }

  MethodHarness harness_;
};

TEST_F(MethodEventTracerTest, ReportsLoadExecuteAndEachKernelCall) {
  RecordingTracer tracer;
  run(&tracer);
  // Load events come before any block; inner events end first.
  EXPECT_EQ(tracer.names_in("(none)"),
            (std::vector<std::string>{"Method::init", "Program::load_method"}));
  EXPECT_EQ(tracer.names_in("Execute"),
            (std::vector<std::string>{"native_call_add_one.out",
                                      "OPERATOR_CALL",
                                      "native_call_add.out",
                                      "OPERATOR_CALL",
                                      "Method::execute"}));
  for (const Recorded& event : tracer.events) {
    if (event.block != "Execute" || event.name == "Method::execute") {
      EXPECT_EQ(event.chain, kUnsetChainId) << event.name;
      continue;
    }
    EXPECT_EQ(event.chain, 0) << event.name;
  }
  // The debug handle is the instruction index.
  EXPECT_EQ(tracer.events[2].handle, 0u);
  EXPECT_EQ(tracer.events[4].handle, 1u);
}

TEST_F(MethodEventTracerTest, MethodOnlyProfilingSkipsInstructions) {
  RecordingTracer tracer;
  tracer.set_event_tracer_profiling_level(
      EventTracerProfilingLevel::kProfileMethodOnly);
  run(&tracer);
  EXPECT_EQ(tracer.names_in("Execute"),
            (std::vector<std::string>{"Method::execute"}));
}

TEST_F(MethodEventTracerTest, LogsValuesByDebugLevel) {
  RecordingTracer silent;
  run(&silent);
  EXPECT_EQ(silent.names_in("Execute").size(), 5u);

  RecordingTracer outputs_only;
  outputs_only.set_event_tracer_debug_level(
      EventTracerDebugLogLevel::kProgramOutputs);
  run(&outputs_only);
  const Recorded& output = outputs_only.events.back();
  EXPECT_EQ(output.name, "value");
  EXPECT_EQ(output.value_type, LoggedEValueType::kProgramOutput);
  EXPECT_EQ(output.value.toTensor().const_data_ptr<float>()[1], 6.0f);

  RecordingTracer everything;
  everything.set_event_tracer_debug_level(
      EventTracerDebugLogLevel::kIntermediateOutputs);
  run(&everything);
  std::vector<std::pair<DebugHandle, LoggedEValueType>> logged;
  for (const Recorded& event : everything.events) {
    if (event.name == "value") {
      logged.push_back({event.handle, event.value_type});
    }
  }
  // Each kernel call's out argument, then the method output.
  EXPECT_EQ(logged.size(), 3u);
  EXPECT_EQ(logged[0].first, 0u);
  EXPECT_EQ(logged[1].first, 1u);
  EXPECT_EQ(logged[2].second, LoggedEValueType::kProgramOutput);
}

// Copies its input to its output, reporting one delegate event with id 7.
class TracingBackend final : public BackendInterface {
 public:
  bool is_available() const override {
    return true;
  }
  Result<DelegateHandle*> init(BackendInitContext&,
                               FreeableBuffer* processed,
                               ArrayRef<CompileSpec>) const override {
    processed->Free();
    return static_cast<DelegateHandle*>(nullptr);
  }
  Error execute(BackendExecutionContext& context,
                DelegateHandle*,
                Span<EValue*> args) const override {
    EventTracerEntry entry = event_tracer_start_profiling_delegate(
        context.event_tracer(), nullptr, 7);
    const Tensor& in = args[0]->toTensor();
    Tensor& out = args[1]->toTensor();
    for (ssize_t i = 0; i < in.numel(); ++i) {
      out.mutable_data_ptr<float>()[i] = in.const_data_ptr<float>()[i];
    }
    event_tracer_end_profiling_delegate(context.event_tracer(), entry);
    return Error::Ok;
  }
};

TEST_F(MethodEventTracerTest, DelegateCallsAndTheirEvents) {
  static TracingBackend backend;
  static const bool registered =
      register_backend({"TestTracingBackend", &backend}) == Error::Ok;
  ASSERT_TRUE(registered);
  ProgramSpec p;
  MethodSpec m;
  m.values = {ValueSpec::Tensor(planned_float({2}, 0)),
              ValueSpec::Tensor(planned_float({2}, 16))};
  m.inputs = {0};
  m.outputs = {1};
  m.chains = {{InstructionSpec::Delegate(0, {0, 1})}};
  m.non_const_buffer_sizes = {0, 32};
  DelegateSpec d;
  d.id = "TestTracingBackend";
  d.inline_data = true;
  p.inline_delegate_data = {float_bytes({0.0f})};
  m.delegates = {d};
  p.methods = {m};

  RecordingTracer tracer;
  ASSERT_EQ(harness_.load(p, "forward", std::nullopt, &tracer), Error::Ok);
  OwnedTensor x = float_tensor({2}, {1, 2});
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(tracer.names_in("Execute"),
            (std::vector<std::string>{
                "delegate event", "DELEGATE_CALL", "Method::execute"}));
  const Recorded& delegate_event = tracer.events[2];
  EXPECT_EQ(delegate_event.delegate_id, 7);
  EXPECT_EQ(delegate_event.chain, 0);
  EXPECT_EQ(delegate_event.handle, 0u);
}

TEST_F(MethodEventTracerTest, RunsWithoutATracer) {
  run(nullptr);
  EXPECT_EQ(
      harness_.method().get_output(0).toTensor().const_data_ptr<float>()[0],
      4.0f);
}

} // namespace
