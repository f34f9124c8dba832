// ETDumpGen writes upstream's ETDump format (checked here with the
// FlatBuffers verifier and the generated accessors; test/devtools reads the
// files with our Inspector and upstream's), records a Method's events and
// values, and never writes past the buffers it is given.

#include <executorch/devtools/etdump/etdump_gen.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <executorch/devtools/etdump/etdump_schema_generated.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/method_harness.h>
#include <executorch/runtime/testing/owned_tensor.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;
using executorch::aten::Tensor;
using executorch::etdump::ETDumpGen;
using executorch::etdump::ETDumpResult;

namespace {

constexpr uint8_t kGuard = 0xAB;

// A buffer with guard bytes on both sides, to catch any write outside it.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t size) : bytes_(size + 2 * kPad, kGuard) {}
  Span<uint8_t> span() {
    return {bytes_.data() + kPad, bytes_.size() - 2 * kPad};
  }
  bool guards_intact() const {
    for (size_t i = 0; i < kPad; ++i) {
      if (bytes_[i] != kGuard || bytes_[bytes_.size() - 1 - i] != kGuard) {
        return false;
      }
    }
    return true;
  }

 private:
  static constexpr size_t kPad = 64;
  std::vector<uint8_t> bytes_;
};

const etdump::ETDump* verified(const ETDumpResult& result) {
  if (result.buf == nullptr) {
    return nullptr;
  }
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(result.buf),
                                 result.size);
  if (!etdump::VerifySizePrefixedETDumpBuffer(verifier) ||
      !flatbuffers::BufferHasIdentifier(result.buf, "ED00", true)) {
    return nullptr;
  }
  return etdump::GetSizePrefixedETDump(result.buf);
}

std::vector<std::string> profile_names(const etdump::RunData* run) {
  std::vector<std::string> names;
  for (const auto* event : *run->events()) {
    if (event->profile_event() != nullptr) {
      names.push_back(event->profile_event()->name()->str());
    }
  }
  return names;
}

size_t num_events(const etdump::ETDump* dump) {
  size_t count = 0;
  for (const auto* run : *dump->run_data()) {
    count += run->events()->size();
  }
  return count;
}

class ETDumpGenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }
};

TEST_F(ETDumpGenTest, RecordsAMethodRunWithItsValues) {
  GuardedBuffer events(64 * 1024);
  GuardedBuffer values(4096);
  ETDumpGen etdump(events.span());
  ASSERT_TRUE(etdump.is_static_etdump());
  ASSERT_TRUE(etdump.set_debug_buffer(values.span()).ok());
  etdump.set_event_tracer_debug_level(
      EventTracerDebugLogLevel::kIntermediateOutputs);

  MethodHarness harness;
  ASSERT_EQ(
      harness.load(two_kernel_program(), "forward", std::nullopt, &etdump),
      Error::Ok);
  for (float base : {1.0f, 10.0f}) {
    OwnedTensor x = float_tensor({2}, {base, base + 1});
    ASSERT_EQ(harness.method().set_input(x.tensor(), 0), Error::Ok);
    ASSERT_EQ(harness.method().execute(), Error::Ok);
  }
  EXPECT_EQ(etdump.get_num_blocks(), 3u);

  const ETDumpResult result = etdump.get_etdump_data();
  const etdump::ETDump* dump = verified(result);
  ASSERT_NE(dump, nullptr);
  // The ETDump is built inside the caller's buffer.
  const uint8_t* start = events.span().data();
  EXPECT_GE(static_cast<uint8_t*>(result.buf), start);
  EXPECT_LE(static_cast<uint8_t*>(result.buf) + result.size,
            start + events.span().size());
  ASSERT_EQ(dump->run_data()->size(), 3u);

  const etdump::RunData* load = dump->run_data()->Get(0);
  EXPECT_EQ(load->name()->str(), "Default");
  EXPECT_EQ(profile_names(load),
            (std::vector<std::string>{"Method::init", "Program::load_method"}));

  for (size_t run = 1; run <= 2; ++run) {
    const etdump::RunData* execute = dump->run_data()->Get(run);
    EXPECT_EQ(execute->name()->str(), "Execute");
    EXPECT_EQ(execute->bundled_input_index(), -1);
    EXPECT_EQ(profile_names(execute),
              (std::vector<std::string>{"native_call_add_one.out",
                                        "OPERATOR_CALL",
                                        "native_call_add.out",
                                        "OPERATOR_CALL",
                                        "Method::execute"}));
    std::vector<float> logged;
    std::vector<int> instructions;
    bool saw_output = false;
    for (const auto* event : *execute->events()) {
      if (const auto* profile = event->profile_event()) {
        EXPECT_LE(profile->start_time(), profile->end_time());
        EXPECT_EQ(profile->delegate_debug_id_int(), -1);
        continue;
      }
      const auto* debug = event->debug_event();
      ASSERT_NE(debug, nullptr);
      const auto* value = debug->debug_entry();
      ASSERT_EQ(value->val(), etdump::ValueType::Tensor);
      const auto* tensor = value->tensor();
      EXPECT_EQ(tensor->scalar_type(),
                executorch_flatbuffer::ScalarType::FLOAT);
      EXPECT_EQ(tensor->sizes()->Get(0), 2);
      EXPECT_EQ(tensor->strides()->Get(0), 1);
      float data[2];
      std::memcpy(data, values.span().data() + tensor->offset(), sizeof(data));
      logged.insert(logged.end(), data, data + 2);
      instructions.push_back(debug->instruction_id());
      saw_output = saw_output ||
                   (value->output() != nullptr && value->output()->bool_val());
    }
    const float base = run == 1 ? 1.0f : 10.0f;
    // add_one's result, add's result, then the method output again.
    EXPECT_EQ(logged,
              (std::vector<float>{base + 1,
                                  base + 2,
                                  2 * (base + 1),
                                  2 * (base + 2),
                                  2 * (base + 1),
                                  2 * (base + 2)}));
    EXPECT_EQ(instructions[0], 0);
    EXPECT_EQ(instructions[1], 1);
    EXPECT_TRUE(saw_output);
  }
  EXPECT_TRUE(events.guards_intact());
  EXPECT_TRUE(values.guards_intact());
}

TEST_F(ETDumpGenTest, LoggedTensorsFitTheReservedRoom) {
  // Debug events with tensors of many ranks and lists, in a buffer just
  // large enough: the serialized ETDump stays within the reservation.
  for (size_t size = 1024; size <= 16 * 1024; size += 512) {
    GuardedBuffer events(size);
    GuardedBuffer values(64 * 1024);
    LogCapture logs;
    ETDumpGen etdump(events.span());
    ASSERT_TRUE(etdump.set_debug_buffer(values.span()).ok());
    OwnedTensor scalar = float_tensor({}, {1});
    OwnedTensor matrix = float_tensor({2, 3}, {1, 2, 3, 4, 5, 6});
    OwnedTensor cube = float_tensor({1, 1, 2, 1}, {1, 2});
    Tensor list[] = {scalar.tensor(), matrix.tensor(), cube.tensor()};
    for (int i = 0; i < 30; ++i) {
      etdump.set_chain_debug_handle(0, static_cast<DebugHandle>(i));
      (void)etdump.log_evalue(EValue(matrix.tensor()));
      (void)etdump.log_evalue(EValue(cube.tensor()));
      (void)etdump.log_intermediate_output_delegate(
          nullptr, i, ArrayRef<Tensor>(list, 3));
      (void)etdump.log_evalue(EValue(2.5), LoggedEValueType::kProgramOutput);
    }
    ASSERT_NE(verified(etdump.get_etdump_data()), nullptr) << size;
    EXPECT_FALSE(logs.contains({"outgrew"})) << size;
    EXPECT_TRUE(events.guards_intact());
  }
}

// Records `count` profiling events with varied names and metadata.
void record_events(ETDumpGen& etdump, size_t count) {
  etdump.create_event_block("Execute");
  for (size_t i = 0; i < count; ++i) {
    const std::string name = "event_" + std::to_string(i % 7);
    etdump.set_chain_debug_handle(0, static_cast<DebugHandle>(i));
    etdump.end_profiling(etdump.start_profiling(name.c_str()));
    if (i % 5 == 0) {
      const uint8_t metadata[3] = {1, 2, 3};
      etdump.log_profiling_delegate(
          nullptr, static_cast<DelegateDebugIntId>(i), 10, 20, metadata, i % 3);
    }
  }
}

TEST_F(ETDumpGenTest, AFullBufferStopsRecordingAndNeverOverruns) {
  // Every size from too small for anything to large enough for everything:
  // the ETDump is always valid and holds what was recorded before the
  // buffer filled up; nothing outside the buffer is touched.
  constexpr size_t kEvents = 40;
  size_t previous_events = 0;
  for (size_t size = 0; size <= 12 * 1024; size += 72) {
    GuardedBuffer events(size);
    LogCapture logs;
    ETDumpGen etdump(events.span());
    record_events(etdump, kEvents);
    const ETDumpResult result = etdump.get_etdump_data();
    const etdump::ETDump* dump = verified(result);
    ASSERT_TRUE(events.guards_intact()) << size;
    EXPECT_FALSE(logs.contains({"outgrew"})) << size;
    if (dump == nullptr) {
      // Only a buffer too small for an empty ETDump yields nothing.
      EXPECT_TRUE(logs.contains({"too small for an ETDump"})) << size;
      EXPECT_LT(size, 512u) << size;
      continue;
    }
    const size_t recorded = num_events(dump);
    EXPECT_GE(recorded, previous_events) << size;
    previous_events = recorded;
    if (etdump.num_dropped_events() > 0) {
      EXPECT_TRUE(logs.contains({"event buffer is full"})) << size;
    } else {
      EXPECT_EQ(recorded, kEvents + kEvents / 5) << size;
    }
  }
  EXPECT_EQ(previous_events, kEvents + kEvents / 5);
}

TEST_F(ETDumpGenTest, HeapModeGrowsAsNeeded) {
  ETDumpGen etdump;
  EXPECT_FALSE(etdump.is_static_etdump());
  record_events(etdump, 5000);
  const ETDumpResult result = etdump.get_etdump_data();
  const etdump::ETDump* dump = verified(result);
  ASSERT_NE(dump, nullptr);
  EXPECT_EQ(num_events(dump), 6000u);
  EXPECT_EQ(etdump.num_dropped_events(), 0u);
  std::free(result.buf);

  etdump.reset();
  const ETDumpResult empty = etdump.get_etdump_data();
  ASSERT_NE(verified(empty), nullptr);
  EXPECT_EQ(verified(empty)->run_data()->size(), 0u);
  std::free(empty.buf);
}

TEST_F(ETDumpGenTest, AFullDebugBufferSkipsValues) {
  GuardedBuffer values(100);
  ETDumpGen etdump;
  ASSERT_TRUE(etdump.set_debug_buffer(values.span()).ok());
  OwnedTensor small = float_tensor({4}, {1, 2, 3, 4});
  LogCapture logs;
  // 16 bytes at 0, then 16 at 64; the third does not fit.
  EXPECT_TRUE(*etdump.log_evalue(EValue(small.tensor())));
  EXPECT_TRUE(*etdump.log_evalue(EValue(small.tensor())));
  EXPECT_FALSE(*etdump.log_evalue(EValue(small.tensor())));
  EXPECT_TRUE(logs.contains({"debug buffer", "full"}));
  EXPECT_EQ(etdump.num_dropped_events(), 1u);
  EXPECT_EQ(etdump.debug_buffer_used(), 80u);
  EXPECT_TRUE(values.guards_intact());

  const ETDumpResult result = etdump.get_etdump_data();
  const etdump::ETDump* dump = verified(result);
  ASSERT_NE(dump, nullptr);
  const auto* events = dump->run_data()->Get(0)->events();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(events->Get(1)->debug_event()->debug_entry()->tensor()->offset(),
            64);
  std::free(result.buf);
}

TEST_F(ETDumpGenTest, TensorsNeedADebugBuffer) {
  ETDumpGen etdump;
  OwnedTensor small = float_tensor({1}, {1});
  LogCapture logs;
  EXPECT_EQ(etdump.log_evalue(EValue(small.tensor())).error(),
            Error::InvalidState);
  EXPECT_TRUE(logs.contains({"set_debug_buffer"}));
  // Scalars need none.
  EXPECT_TRUE(*etdump.log_evalue(EValue(int64_t{3})));
}

class EvenIdsOnly final : public EventTracerFilterBase {
 public:
  Result<bool> filter(const char*, DelegateDebugIntId id) override {
    return id % 2 == 0;
  }
};

TEST_F(ETDumpGenTest, DelegateEventsValuesAndAllocations) {
  GuardedBuffer values(1024);
  ETDumpGen etdump;
  ASSERT_TRUE(etdump.set_debug_buffer(values.span()).ok());
  EvenIdsOnly filter;
  etdump.set_delegation_intermediate_output_filter(&filter);
  etdump.create_event_block("Execute");
  const AllocatorID allocator = etdump.track_allocator("method allocator");
  etdump.track_allocation(allocator, 128);
  etdump.set_chain_debug_handle(0, 3);

  const char metadata[] = "xnn";
  etdump.end_profiling_delegate(
      etdump.start_profiling_delegate(nullptr, 4), metadata, 3);
  etdump.end_profiling_delegate(etdump.start_profiling_delegate("conv", -1));
  OwnedTensor a = float_tensor({2}, {5, 6});
  OwnedTensor b = float_tensor({1}, {7});
  Tensor list[] = {a.tensor(), b.tensor()};
  EXPECT_TRUE(*etdump.log_intermediate_output_delegate(
      nullptr, 2, ArrayRef<Tensor>(list, 2)));
  EXPECT_FALSE(*etdump.log_intermediate_output_delegate(nullptr, 5, 1.5));
  EXPECT_TRUE(*etdump.log_intermediate_output_delegate(nullptr, 6, true));
  EXPECT_EQ(etdump.log_intermediate_output_delegate("conv", 2, 1).error(),
            Error::InvalidArgument);

  const ETDumpResult result = etdump.get_etdump_data();
  const etdump::ETDump* dump = verified(result);
  ASSERT_NE(dump, nullptr);
  const etdump::RunData* run = dump->run_data()->Get(0);
  ASSERT_EQ(run->allocators()->size(), 1u);
  EXPECT_EQ(run->allocators()->Get(0)->name()->str(), "method allocator");
  const auto* events = run->events();
  ASSERT_EQ(events->size(), 5u);
  EXPECT_EQ(events->Get(0)->allocation_event()->allocation_size(), 128u);

  const auto* by_id = events->Get(1)->profile_event();
  EXPECT_EQ(by_id->delegate_debug_id_int(), 4);
  EXPECT_EQ(by_id->delegate_debug_id_str(), nullptr);
  EXPECT_EQ(by_id->instruction_id(), 3);
  EXPECT_EQ(std::string(by_id->delegate_debug_metadata()->begin(),
                        by_id->delegate_debug_metadata()->end()),
            "xnn");
  const auto* by_name = events->Get(2)->profile_event();
  EXPECT_EQ(by_name->delegate_debug_id_int(), -1);
  EXPECT_EQ(by_name->delegate_debug_id_str()->str(), "conv");

  const auto* tensors = events->Get(3)->debug_event();
  EXPECT_EQ(tensors->delegate_debug_id_int(), 2);
  ASSERT_EQ(tensors->debug_entry()->val(), etdump::ValueType::TensorList);
  const auto* list_entry = tensors->debug_entry()->tensor_list()->tensors();
  ASSERT_EQ(list_entry->size(), 2u);
  float second;
  std::memcpy(&second,
              values.span().data() + list_entry->Get(1)->offset(),
              sizeof(float));
  EXPECT_EQ(second, 7.0f);
  EXPECT_EQ(list_entry->Get(0)->sizes()->Get(0), 2);
  EXPECT_TRUE(
      events->Get(4)->debug_event()->debug_entry()->bool_value()->bool_val());
  std::free(result.buf);
}

TEST_F(ETDumpGenTest, BundledInputIndexMarksTheNextBlock) {
  ETDumpGen etdump;
  etdump.set_bundled_input_index(2);
  etdump.create_event_block("Execute");
  etdump.create_event_block("Execute");
  const ETDumpResult result = etdump.get_etdump_data();
  const etdump::ETDump* dump = verified(result);
  ASSERT_NE(dump, nullptr);
  EXPECT_EQ(dump->run_data()->Get(0)->bundled_input_index(), 2);
  EXPECT_EQ(dump->run_data()->Get(1)->bundled_input_index(), -1);
  std::free(result.buf);
}

} // namespace
