#pragma once

// ETDumpGen: an EventTracer that records what the runtime reports and
// serializes it as an ETDump, upstream ExecuTorch's profiling and debugging
// format (devtools/etdump/etdump_schema.fbs), which the Inspector
// (executorch.devtools.Inspector) and upstream's tools read.
//
//   ETDumpGen etdump(Span<uint8_t>(event_buffer, sizeof(event_buffer)));
//   etdump.set_debug_buffer(Span<uint8_t>(debug_buffer, ...));  // optional
//   etdump.set_event_tracer_debug_level(
//       EventTracerDebugLogLevel::kIntermediateOutputs);            // optional
//   auto method = program->load_method("forward", &memory, &etdump);
//   method->execute();
//   ETDumpResult result = etdump.get_etdump_data();  // write result.buf
//
// Memory: with a buffer, events are recorded into it and the ETDump is built
// in its unused part; nothing is ever written past its end. When it is full,
// recording stops (one warning is logged, num_dropped_events() counts what
// was lost) and the ETDump holds the events recorded until then. Without a
// buffer, heap memory grows as needed. Logged tensors' bytes go to the debug
// buffer (set_debug_buffer); a value that does not fit is skipped with a
// warning. Each block is one method execution ("Execute"); load events go to
// a block named "Default".
//
// Threading: one thread at a time (the one running the traced Method).
//
// Tests: devtools/etdump/etdump_gen_test.cpp (format, full buffers) and
// test/devtools/test_etdump.py (read back by our Inspector and upstream's).

#include <cstddef>
#include <cstdint>

#include <executorch/devtools/etdump/event_log.h>
#include <executorch/runtime/core/event_tracer.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>

namespace executorch {
namespace etdump {

// A serialized ETDump. From a caller-buffer ETDumpGen, `buf` points into that
// buffer and stays valid until the next event is recorded; otherwise it is
// heap memory the caller releases with free().
struct ETDumpResult {
  void* buf;
  size_t size;
};

class ETDumpGen : public ::executorch::runtime::EventTracer {
 public:
  // Records into `buffer` (borrowed, must outlive this object) or, when it is
  // empty, into heap memory.
  explicit ETDumpGen(::executorch::runtime::Span<uint8_t> buffer = {nullptr,
                                                                    (size_t)0});
  ~ETDumpGen() override = default;
  ETDumpGen(const ETDumpGen&) = delete;
  ETDumpGen& operator=(const ETDumpGen&) = delete;

  void create_event_block(const char* name) override;
  ::executorch::runtime::EventTracerEntry start_profiling(
      const char* name,
      ::executorch::runtime::ChainID chain_id = -1,
      ::executorch::runtime::DebugHandle debug_handle = 0) override;
  void end_profiling(::executorch::runtime::EventTracerEntry entry) override;
  ::executorch::runtime::EventTracerEntry start_profiling_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index) override;
  void end_profiling_delegate(::executorch::runtime::EventTracerEntry entry,
                              const void* metadata = nullptr,
                              size_t metadata_len = 0) override;
  void log_profiling_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      et_timestamp_t start_time,
      et_timestamp_t end_time,
      const void* metadata = nullptr,
      size_t metadata_len = 0) override;
  ::executorch::runtime::AllocatorID track_allocator(const char* name) override;
  void track_allocation(::executorch::runtime::AllocatorID id,
                        size_t size) override;
  ::executorch::runtime::Result<bool> log_evalue(
      const ::executorch::runtime::EValue& evalue,
      ::executorch::runtime::LoggedEValueType evalue_type =
          ::executorch::runtime::LoggedEValueType::kIntermediateOutput)
      override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const executorch::aten::Tensor& output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const ::executorch::runtime::ArrayRef<executorch::aten::Tensor> output)
      override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const int& output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const bool& output) override;
  ::executorch::runtime::Result<bool> log_intermediate_output_delegate(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const double& output) override;
  void set_delegation_intermediate_output_filter(
      ::executorch::runtime::EventTracerFilterBase* filter) override;

  // Where logged tensors' bytes go (borrowed). Tensor entries in the ETDump
  // give their offset in it; save it next to the ETDump for the Inspector.
  ::executorch::runtime::Result<bool> set_debug_buffer(
      ::executorch::runtime::Span<uint8_t> buffer);
  // Bytes of the debug buffer in use.
  size_t debug_buffer_used() const {
    return debug_used_;
  }

  // Serializes everything recorded so far (recording may continue).
  ETDumpResult get_etdump_data();

  size_t get_num_blocks() const {
    return num_blocks_;
  }
  bool is_static_etdump() const {
    return log_.is_caller_buffer();
  }
  // Events and values dropped because a buffer was full.
  size_t num_dropped_events() const {
    return num_dropped_;
  }
  // Forgets everything recorded; the buffers are kept.
  void reset();

 private:
  struct ValueToLog;

  internal::RecordId intern(const char* text);
  // Starts the "Default" block when an event arrives before any block.
  bool ensure_block();
  void record_profile_event(
      internal::RecordId name,
      ::executorch::runtime::ChainID chain_id,
      ::executorch::runtime::DebugHandle debug_handle,
      ::executorch::runtime::DelegateDebugIntId delegate_id,
      internal::RecordId delegate_name,
      et_timestamp_t start_time,
      et_timestamp_t end_time,
      const void* metadata,
      size_t metadata_len);
  ::executorch::runtime::Result<bool> record_debug_event(
      const ValueToLog& value,
      internal::RecordId name,
      ::executorch::runtime::DelegateDebugIntId delegate_id,
      internal::RecordId delegate_name);
  template <typename T>
  ::executorch::runtime::Result<bool> log_delegate_output(
      const char* name,
      ::executorch::runtime::DelegateDebugIntId delegate_debug_index,
      const T& output);
  bool debug_buffer_fits(
      ::executorch::runtime::ArrayRef<executorch::aten::Tensor> tensors) const;
  // Copies a tensor's bytes into the debug buffer (which has room); returns
  // their offset.
  int64_t copy_to_debug_buffer(const executorch::aten::Tensor& tensor);
  void note_dropped();

  internal::EventLog log_;
  ::executorch::runtime::Span<uint8_t> debug_buffer_;
  size_t debug_used_ = 0;
  ::executorch::runtime::EventTracerFilterBase* filter_ = nullptr;
  size_t num_blocks_ = 0;
  size_t num_allocators_in_block_ = 0;
  size_t num_dropped_ = 0;
  bool warned_full_ = false;
  bool warned_debug_full_ = false;
  bool warned_no_debug_buffer_ = false;
};

} // namespace etdump
} // namespace executorch

namespace torch {
namespace executor {
using etdump_result = ::executorch::etdump::ETDumpResult;
using ::executorch::etdump::ETDumpGen;
} // namespace executor
} // namespace torch
