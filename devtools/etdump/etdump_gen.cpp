#include <executorch/devtools/etdump/etdump_gen.h>

#include <cstring>

#include <executorch/devtools/etdump/etdump_serializer.h>
#include <executorch/devtools/etdump/event_records.h>
#include <executorch/runtime/platform/log.h>
#include <executorch/runtime/platform/platform.h>

namespace executorch {
namespace etdump {

using ::executorch::aten::Tensor;
using ::executorch::runtime::AllocatorID;
using ::executorch::runtime::ArrayRef;
using ::executorch::runtime::ChainID;
using ::executorch::runtime::DebugHandle;
using ::executorch::runtime::DelegateDebugIdType;
using ::executorch::runtime::DelegateDebugIntId;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::EventTracerEntry;
using ::executorch::runtime::EventTracerFilterBase;
using ::executorch::runtime::kUnsetChainId;
using ::executorch::runtime::kUnsetDebugHandle;
using ::executorch::runtime::kUnsetDelegateDebugIntId;
using ::executorch::runtime::LoggedEValueType;
using ::executorch::runtime::Result;
using ::executorch::runtime::Span;
using internal::kNoRecord;
using internal::RecordId;
using internal::RecordKind;

namespace {

// Logged tensors start at multiples of this in the debug buffer.
constexpr size_t kDebugBufferAlignment = 64;

size_t align_debug_offset(size_t offset) {
  return (offset + kDebugBufferAlignment - 1) & ~(kDebugBufferAlignment - 1);
}

} // namespace

// What one debug event logs: a scalar, or one or more tensors.
struct ETDumpGen::ValueToLog {
  internal::LoggedValueType type;
  bool is_output;
  int64_t int_value;
  double double_value;
  bool bool_value;
  ArrayRef<Tensor> tensors;
};

ETDumpGen::ETDumpGen(Span<uint8_t> buffer)
    : log_(buffer.data(), buffer.size(), internal::kETDumpBaseBound) {}

void ETDumpGen::reset() {
  log_.clear();
  debug_used_ = 0;
  num_blocks_ = 0;
  num_allocators_in_block_ = 0;
  num_dropped_ = 0;
  warned_full_ = false;
  warned_debug_full_ = false;
  warned_no_debug_buffer_ = false;
  chain_id_ = kUnsetChainId;
  debug_handle_ = kUnsetDebugHandle;
}

void ETDumpGen::note_dropped() {
  ++num_dropped_;
  if (!warned_full_) {
    warned_full_ = true;
    ET_LOG(Error,
           "ETDumpGen: the event buffer is full; recording stopped (give "
           "ETDumpGen a larger buffer to keep every event)");
  }
}

RecordId ETDumpGen::intern(const char* text) {
  if (text == nullptr) {
    return kNoRecord;
  }
  const size_t length = std::strlen(text);
  return log_.intern(text, length, internal::string_bound(length));
}

void ETDumpGen::create_event_block(const char* name) {
  const RecordId name_id = intern(name);
  const RecordId id = name_id == kNoRecord
                          ? kNoRecord
                          : log_.append(RecordKind::kBlock,
                                        sizeof(internal::BlockRecord),
                                        internal::kBlockBound);
  if (id == kNoRecord) {
    note_dropped();
    return;
  }
  auto* block = static_cast<internal::BlockRecord*>(log_.payload(id));
  block->name = name_id;
  block->bundled_input_index = bundled_input_index_;
  ++num_blocks_;
  num_allocators_in_block_ = 0;
  // The index applies to the block it was set for.
  bundled_input_index_ = ::executorch::runtime::kUnsetBundledInputIndex;
}

bool ETDumpGen::ensure_block() {
  if (num_blocks_ == 0) {
    create_event_block("Default");
  }
  return num_blocks_ > 0;
}

EventTracerEntry ETDumpGen::start_profiling(const char* name,
                                            ChainID chain_id,
                                            DebugHandle debug_handle) {
  EventTracerEntry entry{};
  if (chain_id == kUnsetChainId && debug_handle == kUnsetDebugHandle) {
    chain_id = chain_id_;
    debug_handle = debug_handle_;
  }
  entry.event_id = intern(name);
  entry.chain_id = chain_id;
  entry.debug_handle = debug_handle;
  entry.delegate_event_id_type = DelegateDebugIdType::kNone;
  entry.start_time = et_pal_current_ticks();
  return entry;
}

void ETDumpGen::end_profiling(EventTracerEntry entry) {
  const et_timestamp_t end_time = et_pal_current_ticks();
  if (entry.event_id == kNoRecord) {
    note_dropped();
    return;
  }
  record_profile_event(static_cast<RecordId>(entry.event_id),
                       entry.chain_id,
                       entry.debug_handle,
                       kUnsetDelegateDebugIntId,
                       kNoRecord,
                       entry.start_time,
                       end_time,
                       nullptr,
                       0);
}

EventTracerEntry ETDumpGen::start_profiling_delegate(
    const char* name, DelegateDebugIntId delegate_debug_index) {
  EventTracerEntry entry{};
  entry.chain_id = chain_id_;
  entry.debug_handle = debug_handle_;
  if (name != nullptr) {
    entry.event_id = intern(name);
    entry.delegate_event_id_type = DelegateDebugIdType::kStr;
  } else {
    entry.event_id = delegate_debug_index;
    entry.delegate_event_id_type = DelegateDebugIdType::kInt;
  }
  entry.start_time = et_pal_current_ticks();
  return entry;
}

void ETDumpGen::end_profiling_delegate(EventTracerEntry entry,
                                       const void* metadata,
                                       size_t metadata_len) {
  const et_timestamp_t end_time = et_pal_current_ticks();
  const bool by_name =
      entry.delegate_event_id_type == DelegateDebugIdType::kStr;
  if (by_name && entry.event_id == kNoRecord) {
    note_dropped();
    return;
  }
  record_profile_event(
      kNoRecord,
      entry.chain_id,
      entry.debug_handle,
      by_name ? kUnsetDelegateDebugIntId
              : static_cast<DelegateDebugIntId>(entry.event_id),
      by_name ? static_cast<RecordId>(entry.event_id) : kNoRecord,
      entry.start_time,
      end_time,
      metadata,
      metadata_len);
}

void ETDumpGen::log_profiling_delegate(const char* name,
                                       DelegateDebugIntId delegate_debug_index,
                                       et_timestamp_t start_time,
                                       et_timestamp_t end_time,
                                       const void* metadata,
                                       size_t metadata_len) {
  const RecordId name_id = intern(name);
  if (name != nullptr && name_id == kNoRecord) {
    note_dropped();
    return;
  }
  record_profile_event(
      kNoRecord,
      chain_id_,
      debug_handle_,
      name != nullptr ? kUnsetDelegateDebugIntId : delegate_debug_index,
      name_id,
      start_time,
      end_time,
      metadata,
      metadata_len);
}

void ETDumpGen::record_profile_event(RecordId name,
                                     ChainID chain_id,
                                     DebugHandle debug_handle,
                                     DelegateDebugIntId delegate_id,
                                     RecordId delegate_name,
                                     et_timestamp_t start_time,
                                     et_timestamp_t end_time,
                                     const void* metadata,
                                     size_t metadata_len) {
  if (metadata == nullptr) {
    metadata_len = 0;
  }
  const RecordId id =
      ensure_block()
          ? log_.append(RecordKind::kProfileEvent,
                        sizeof(internal::ProfileRecord) + metadata_len,
                        internal::profile_event_bound(metadata_len))
          : kNoRecord;
  if (id == kNoRecord) {
    note_dropped();
    return;
  }
  auto* event = static_cast<internal::ProfileRecord*>(log_.payload(id));
  event->name = name;
  event->chain_index = chain_id;
  event->instruction_id = static_cast<int32_t>(debug_handle);
  event->delegate_id_int = delegate_id;
  event->delegate_id_str = delegate_name;
  event->metadata_length = static_cast<uint32_t>(metadata_len);
  event->start_time = start_time;
  event->end_time = end_time;
  if (metadata_len > 0) {
    std::memcpy(event + 1, metadata, metadata_len);
  }
}

AllocatorID ETDumpGen::track_allocator(const char* name) {
  const RecordId name_id = intern(name);
  const RecordId id = name_id != kNoRecord && ensure_block()
                          ? log_.append(RecordKind::kAllocator,
                                        sizeof(internal::AllocatorRecord),
                                        internal::kAllocatorBound)
                          : kNoRecord;
  if (id == kNoRecord) {
    note_dropped();
    return 0;
  }
  static_cast<internal::AllocatorRecord*>(log_.payload(id))->name = name_id;
  return static_cast<AllocatorID>(num_allocators_in_block_++);
}

void ETDumpGen::track_allocation(AllocatorID allocator_id, size_t size) {
  const RecordId id = ensure_block()
                          ? log_.append(RecordKind::kAllocationEvent,
                                        sizeof(internal::AllocationRecord),
                                        internal::kAllocationEventBound)
                          : kNoRecord;
  if (id == kNoRecord) {
    note_dropped();
    return;
  }
  auto* event = static_cast<internal::AllocationRecord*>(log_.payload(id));
  event->allocator_id = static_cast<int32_t>(allocator_id);
  event->size = size;
}

Result<bool> ETDumpGen::set_debug_buffer(Span<uint8_t> buffer) {
  debug_buffer_ = buffer;
  debug_used_ = 0;
  return true;
}

bool ETDumpGen::debug_buffer_fits(ArrayRef<Tensor> tensors) const {
  size_t used = debug_used_;
  for (const Tensor& tensor : tensors) {
    used = align_debug_offset(used);
    if (used > debug_buffer_.size() ||
        tensor.nbytes() > debug_buffer_.size() - used) {
      return false;
    }
    used += tensor.nbytes();
  }
  return true;
}

int64_t ETDumpGen::copy_to_debug_buffer(const Tensor& tensor) {
  const size_t start = align_debug_offset(debug_used_);
  if (tensor.nbytes() > 0 && tensor.const_data_ptr() != nullptr) {
    std::memcpy(
        debug_buffer_.data() + start, tensor.const_data_ptr(), tensor.nbytes());
  }
  debug_used_ = start + tensor.nbytes();
  return static_cast<int64_t>(start);
}

Result<bool> ETDumpGen::record_debug_event(const ValueToLog& value,
                                           RecordId name,
                                           DelegateDebugIntId delegate_id,
                                           RecordId delegate_name) {
  if (value.tensors.size() > 0 && debug_buffer_.data() == nullptr) {
    if (!warned_no_debug_buffer_) {
      warned_no_debug_buffer_ = true;
      ET_LOG(Error,
             "ETDumpGen: cannot log tensors without a debug buffer; call "
             "set_debug_buffer() first");
    }
    return Error::InvalidState;
  }
  if (!debug_buffer_fits(value.tensors)) {
    ++num_dropped_;
    if (!warned_debug_full_) {
      warned_debug_full_ = true;
      ET_LOG(Error,
             "ETDumpGen: the debug buffer (%zu bytes) is full; later values "
             "are not logged (give it a larger debug buffer)",
             debug_buffer_.size());
    }
    return false;
  }
  size_t payload = sizeof(internal::DebugRecord);
  size_t bound = internal::kDebugEventBound;
  if (value.type == internal::LoggedValueType::kTensorList) {
    bound += internal::table_bound(1) +
             internal::vector_bound(value.tensors.size(), 4);
  }
  for (const Tensor& tensor : value.tensors) {
    payload += internal::tensor_record_size(tensor.dim());
    bound += internal::tensor_bound(tensor.dim());
  }
  const RecordId id = ensure_block()
                          ? log_.append(RecordKind::kDebugEvent, payload, bound)
                          : kNoRecord;
  if (id == kNoRecord) {
    note_dropped();
    return false;
  }
  auto* event = static_cast<internal::DebugRecord*>(log_.payload(id));
  // The chain index field is unsigned: an unset chain reads as all ones.
  event->chain_index = static_cast<uint64_t>(static_cast<int64_t>(chain_id_));
  event->instruction_id = static_cast<int32_t>(debug_handle_);
  event->delegate_id_int = delegate_id;
  event->delegate_id_str = delegate_name;
  event->name = name;
  event->type = value.type;
  event->is_output = value.is_output ? 1 : 0;
  event->num_tensors = static_cast<uint32_t>(value.tensors.size());
  if (value.type == internal::LoggedValueType::kDouble) {
    event->scalar.double_value = value.double_value;
  } else if (value.type == internal::LoggedValueType::kBool) {
    event->scalar.int_value = 0;
    event->scalar.bool_value = value.bool_value;
  } else {
    event->scalar.int_value = value.int_value;
  }
  auto* cursor = reinterpret_cast<uint8_t*>(event + 1);
  for (const Tensor& tensor : value.tensors) {
    auto* record = reinterpret_cast<internal::TensorRecord*>(cursor);
    record->scalar_type = static_cast<int8_t>(tensor.scalar_type());
    record->dim = static_cast<uint32_t>(tensor.dim());
    record->offset = copy_to_debug_buffer(tensor);
    auto* sizes = reinterpret_cast<int64_t*>(record + 1);
    for (ssize_t d = 0; d < tensor.dim(); ++d) {
      sizes[d] = tensor.size(d);
      sizes[tensor.dim() + d] = tensor.strides()[d];
    }
    cursor += internal::tensor_record_size(tensor.dim());
  }
  return true;
}

Result<bool> ETDumpGen::log_evalue(const EValue& evalue,
                                   LoggedEValueType evalue_type) {
  ValueToLog value{};
  value.is_output = evalue_type == LoggedEValueType::kProgramOutput;
  if (evalue.isTensor()) {
    value.type = internal::LoggedValueType::kTensor;
    value.tensors = ArrayRef<Tensor>(&evalue.toTensor(), 1);
  } else if (evalue.isTensorList()) {
    value.type = internal::LoggedValueType::kTensorList;
    value.tensors = evalue.toTensorList();
  } else if (evalue.isInt()) {
    value.type = internal::LoggedValueType::kInt;
    value.int_value = evalue.toInt();
  } else if (evalue.isBool()) {
    value.type = internal::LoggedValueType::kBool;
    value.bool_value = evalue.toBool();
  } else if (evalue.isDouble()) {
    value.type = internal::LoggedValueType::kDouble;
    value.double_value = evalue.toDouble();
  } else {
    // Lists of scalars, strings and None are not part of the format.
    return false;
  }
  return record_debug_event(
      value, kNoRecord, kUnsetDelegateDebugIntId, kNoRecord);
}

void ETDumpGen::set_delegation_intermediate_output_filter(
    EventTracerFilterBase* filter) {
  filter_ = filter;
}

template <typename T>
Result<bool> ETDumpGen::log_delegate_output(
    const char* name,
    DelegateDebugIntId delegate_debug_index,
    const T& output) {
  ET_CHECK_OR_RETURN_ERROR(
      (name == nullptr) != (delegate_debug_index == kUnsetDelegateDebugIntId),
      InvalidArgument,
      "A delegate output is identified by a name or by an index, not both");
  if (filter_ != nullptr) {
    Result<bool> keep = filter_->filter(name, delegate_debug_index);
    if (!keep.ok() || !*keep) {
      return keep;
    }
  }
  ValueToLog value{};
  if constexpr (std::is_same_v<T, Tensor>) {
    value.type = internal::LoggedValueType::kTensor;
    value.tensors = ArrayRef<Tensor>(&output, 1);
  } else if constexpr (std::is_same_v<T, ArrayRef<Tensor>>) {
    value.type = internal::LoggedValueType::kTensorList;
    value.tensors = output;
  } else if constexpr (std::is_same_v<T, int>) {
    value.type = internal::LoggedValueType::kInt;
    value.int_value = output;
  } else if constexpr (std::is_same_v<T, bool>) {
    value.type = internal::LoggedValueType::kBool;
    value.bool_value = output;
  } else {
    value.type = internal::LoggedValueType::kDouble;
    value.double_value = output;
  }
  const RecordId name_id = intern(name);
  if (name != nullptr && name_id == kNoRecord) {
    note_dropped();
    return false;
  }
  return record_debug_event(
      value,
      kNoRecord,
      name != nullptr ? kUnsetDelegateDebugIntId : delegate_debug_index,
      name_id);
}

Result<bool> ETDumpGen::log_intermediate_output_delegate(
    const char* name,
    DelegateDebugIntId delegate_debug_index,
    const Tensor& output) {
  return log_delegate_output(name, delegate_debug_index, output);
}

Result<bool> ETDumpGen::log_intermediate_output_delegate(
    const char* name,
    DelegateDebugIntId delegate_debug_index,
    const ArrayRef<Tensor> output) {
  return log_delegate_output(name, delegate_debug_index, output);
}

Result<bool> ETDumpGen::log_intermediate_output_delegate(
    const char* name,
    DelegateDebugIntId delegate_debug_index,
    const int& output) {
  return log_delegate_output(name, delegate_debug_index, output);
}

Result<bool> ETDumpGen::log_intermediate_output_delegate(
    const char* name,
    DelegateDebugIntId delegate_debug_index,
    const bool& output) {
  return log_delegate_output(name, delegate_debug_index, output);
}

Result<bool> ETDumpGen::log_intermediate_output_delegate(
    const char* name,
    DelegateDebugIntId delegate_debug_index,
    const double& output) {
  return log_delegate_output(name, delegate_debug_index, output);
}

ETDumpResult ETDumpGen::get_etdump_data() {
  return internal::serialize_etdump(log_);
}

} // namespace etdump
} // namespace executorch
