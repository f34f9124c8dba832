#include <executorch/devtools/etdump/etdump_serializer.h>

#include <cstdlib>
#include <cstring>

#include <flatbuffers/flatbuffers.h>

#include <executorch/devtools/etdump/etdump_schema_generated.h>
#include <executorch/devtools/etdump/event_records.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace etdump {
namespace internal {

namespace {

namespace fb = ::etdump;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr uint32_t kETDumpVersion = 0;
constexpr char kFileIdentifier[] = "ED00";

// Hands the builder the spare end of a caller's buffer. The records'
// reservations make it large enough; should the builder still ask for more,
// it gets heap memory and serialize_etdump() copies the result back.
class SpareMemoryAllocator final : public flatbuffers::Allocator {
 public:
  SpareMemoryAllocator(uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t* allocate(size_t size) override {
    if (!handed_out_ && size <= size_) {
      handed_out_ = true;
      return data_;
    }
    return new uint8_t[size];
  }
  void deallocate(uint8_t* p, size_t) override {
    if (p != data_) {
      delete[] p;
    }
  }

 private:
  uint8_t* data_;
  size_t size_;
  bool handed_out_ = false;
};

class Serializer {
 public:
  Serializer(EventLog& log, FlatBufferBuilder& builder)
      : log_(log), builder_(builder) {}

  Offset<fb::ETDump> build() {
    // Children before parents: strings, then each block's events, then the
    // blocks, then the root.
    for (RecordId id = log_.first(); id != kNoRecord; id = log_.next(id)) {
      if (log_.header(id)->kind == RecordKind::kString) {
        log_.header(id)->serialized =
            builder_.CreateString(log_.string(id), log_.string_length(id)).o;
      }
    }
    for (RecordId id = log_.first(); id != kNoRecord; id = log_.next(id)) {
      if (log_.header(id)->kind == RecordKind::kBlock) {
        log_.header(id)->serialized = build_block(id).o;
      }
    }
    const size_t num_blocks = count_after(kNoRecord, RecordKind::kBlock);
    const auto run_data =
        vector_of<fb::RunData>(kNoRecord, RecordKind::kBlock, num_blocks);
    return fb::CreateETDump(builder_, kETDumpVersion, run_data);
  }

 private:
  Offset<flatbuffers::String> string_of(RecordId id) {
    return id == kNoRecord ? 0 : log_.header(id)->serialized;
  }

  // The records of `kind` after `block` (from the start for kNoRecord) up to
  // the next block.
  size_t count_after(RecordId block, RecordKind kind) {
    size_t count = 0;
    for (RecordId id = block == kNoRecord ? log_.first() : log_.next(block);
         id != kNoRecord;
         id = log_.next(id)) {
      const RecordKind found = log_.header(id)->kind;
      if (found == RecordKind::kBlock && kind != RecordKind::kBlock) {
        break;
      }
      count += found == kind ||
               (kind == RecordKind::kProfileEvent && is_event(found));
    }
    return count;
  }

  static bool is_event(RecordKind kind) {
    return kind == RecordKind::kProfileEvent ||
           kind == RecordKind::kAllocationEvent ||
           kind == RecordKind::kDebugEvent;
  }

  // A vector of the serialized offsets of the `count` records of `kind`
  // following `block` (events of any type for kProfileEvent). FlatBuffers
  // vectors are written last element first, so the records are walked
  // backwards from the block's end.
  template <typename T>
  Offset<flatbuffers::Vector<Offset<T>>> vector_of(RecordId block,
                                                   RecordKind kind,
                                                   size_t count) {
    RecordId end = log_.last();
    if (kind != RecordKind::kBlock) {
      for (RecordId id = block; id != kNoRecord; id = log_.next(id)) {
        if (id != block && log_.header(id)->kind == RecordKind::kBlock) {
          end = log_.prev(id);
          break;
        }
      }
    }
    builder_.StartVector(count, sizeof(flatbuffers::uoffset_t));
    size_t pushed = 0;
    for (RecordId id = end; id != kNoRecord && id != block && pushed < count;
         id = log_.prev(id)) {
      const RecordKind found = log_.header(id)->kind;
      if (found == kind ||
          (kind == RecordKind::kProfileEvent && is_event(found))) {
        builder_.PushElement(Offset<T>(log_.header(id)->serialized));
        ++pushed;
      }
    }
    return Offset<flatbuffers::Vector<Offset<T>>>(builder_.EndVector(count));
  }

  Offset<fb::RunData> build_block(RecordId block) {
    for (RecordId id = log_.next(block);
         id != kNoRecord && log_.header(id)->kind != RecordKind::kBlock;
         id = log_.next(id)) {
      switch (log_.header(id)->kind) {
        case RecordKind::kProfileEvent:
          log_.header(id)->serialized = build_profile_event(id).o;
          break;
        case RecordKind::kAllocationEvent:
          log_.header(id)->serialized = build_allocation_event(id).o;
          break;
        case RecordKind::kDebugEvent:
          log_.header(id)->serialized = build_debug_event(id).o;
          break;
        case RecordKind::kAllocator: {
          const auto* allocator =
              static_cast<AllocatorRecord*>(log_.payload(id));
          log_.header(id)->serialized =
              fb::CreateAllocator(builder_, string_of(allocator->name)).o;
          break;
        }
        default:
          break;
      }
    }
    const auto events =
        vector_of<fb::Event>(block,
                             RecordKind::kProfileEvent,
                             count_after(block, RecordKind::kProfileEvent));
    const auto allocators =
        vector_of<fb::Allocator>(block,
                                 RecordKind::kAllocator,
                                 count_after(block, RecordKind::kAllocator));
    const auto* record = static_cast<BlockRecord*>(log_.payload(block));
    return fb::CreateRunData(builder_,
                             string_of(record->name),
                             record->bundled_input_index,
                             allocators,
                             events);
  }

  Offset<fb::Event> build_profile_event(RecordId id) {
    const auto* record = static_cast<ProfileRecord*>(log_.payload(id));
    Offset<flatbuffers::Vector<uint8_t>> metadata = 0;
    if (record->metadata_length > 0) {
      metadata =
          builder_.CreateVector(reinterpret_cast<const uint8_t*>(record + 1),
                                record->metadata_length);
    }
    const auto event =
        fb::CreateProfileEvent(builder_,
                               string_of(record->name),
                               record->chain_index,
                               record->instruction_id,
                               record->delegate_id_int,
                               string_of(record->delegate_id_str),
                               metadata,
                               record->start_time,
                               record->end_time);
    return fb::CreateEvent(builder_, event);
  }

  Offset<fb::Event> build_allocation_event(RecordId id) {
    const auto* record = static_cast<AllocationRecord*>(log_.payload(id));
    const auto event =
        fb::CreateAllocationEvent(builder_, record->allocator_id, record->size);
    return fb::CreateEvent(builder_, 0, event);
  }

  Offset<fb::Tensor> build_tensor(const TensorRecord* record) {
    const auto* sizes = reinterpret_cast<const int64_t*>(record + 1);
    const auto size_vector = builder_.CreateVector(sizes, record->dim);
    const auto stride_vector =
        builder_.CreateVector(sizes + record->dim, record->dim);
    return fb::CreateTensor(
        builder_,
        static_cast<executorch_flatbuffer::ScalarType>(record->scalar_type),
        size_vector,
        stride_vector,
        record->offset);
  }

  // The tensor record before `tensor` in a list starting at `first`.
  static TensorRecord* previous_tensor(const uint8_t* first,
                                       const TensorRecord* tensor) {
    auto* item = const_cast<uint8_t*>(first);
    auto* record = reinterpret_cast<TensorRecord*>(item);
    while (item + tensor_record_size(record->dim) !=
           reinterpret_cast<const uint8_t*>(tensor)) {
      item += tensor_record_size(record->dim);
      record = reinterpret_cast<TensorRecord*>(item);
    }
    return record;
  }

  Offset<fb::Event> build_debug_event(RecordId id) {
    const auto* record = static_cast<DebugRecord*>(log_.payload(id));
    const auto* cursor = reinterpret_cast<const uint8_t*>(record + 1);
    Offset<fb::Tensor> tensor = 0;
    Offset<fb::TensorList> tensor_list = 0;
    Offset<fb::Int> int_value = 0;
    Offset<fb::Double> double_value = 0;
    Offset<fb::Bool> bool_value = 0;
    fb::ValueType type = fb::ValueType::Null;
    switch (record->type) {
      case LoggedValueType::kTensor:
        type = fb::ValueType::Tensor;
        tensor = build_tensor(reinterpret_cast<const TensorRecord*>(cursor));
        break;
      case LoggedValueType::kTensorList: {
        type = fb::ValueType::TensorList;
        // Tensors first, then the vector of their offsets (back to front).
        auto* item = const_cast<uint8_t*>(cursor);
        TensorRecord* last = nullptr;
        for (uint32_t i = 0; i < record->num_tensors; ++i) {
          last = reinterpret_cast<TensorRecord*>(item);
          last->serialized = build_tensor(last).o;
          item += tensor_record_size(last->dim);
        }
        builder_.StartVector(record->num_tensors,
                             sizeof(flatbuffers::uoffset_t));
        for (uint32_t i = record->num_tensors; i > 0; --i) {
          builder_.PushElement(Offset<fb::Tensor>(last->serialized));
          if (i > 1) {
            last = previous_tensor(cursor, last);
          }
        }
        const Offset<flatbuffers::Vector<Offset<fb::Tensor>>> tensors(
            builder_.EndVector(record->num_tensors));
        tensor_list = fb::CreateTensorList(builder_, tensors);
        break;
      }
      case LoggedValueType::kInt:
        type = fb::ValueType::Int;
        int_value = fb::CreateInt(builder_, record->scalar.int_value);
        break;
      case LoggedValueType::kBool:
        type = fb::ValueType::Bool;
        bool_value = fb::CreateBool(builder_, record->scalar.bool_value);
        break;
      case LoggedValueType::kDouble:
        type = fb::ValueType::Double;
        double_value = fb::CreateDouble(builder_, record->scalar.double_value);
        break;
      default:
        break;
    }
    const Offset<fb::Bool> output =
        record->is_output ? fb::CreateBool(builder_, true) : 0;
    const auto value = fb::CreateValue(builder_,
                                       type,
                                       tensor,
                                       tensor_list,
                                       int_value,
                                       0,
                                       double_value,
                                       bool_value,
                                       output);
    const auto event = fb::CreateDebugEvent(builder_,
                                            record->chain_index,
                                            record->instruction_id,
                                            value,
                                            record->delegate_id_int,
                                            string_of(record->delegate_id_str),
                                            string_of(record->name));
    return fb::CreateEvent(builder_, 0, 0, event);
  }

  EventLog& log_;
  FlatBufferBuilder& builder_;
};

} // namespace

ETDumpResult serialize_etdump(EventLog& log) {
  if (!log.is_caller_buffer()) {
    FlatBufferBuilder builder;
    builder.FinishSizePrefixed(Serializer(log, builder).build(),
                               kFileIdentifier);
    void* result = std::malloc(builder.GetSize());
    if (result == nullptr) {
      return {nullptr, 0};
    }
    std::memcpy(result, builder.GetBufferPointer(), builder.GetSize());
    return {result, builder.GetSize()};
  }
  if (log.spare_size() < log.serialized_bound()) {
    // Only when the buffer cannot even hold an empty ETDump.
    ET_LOG(Error,
           "ETDumpGen: an event buffer of %zu bytes is too small for an "
           "ETDump, which needs at least %zu",
           log.spare_size(),
           log.serialized_bound());
    return {nullptr, 0};
  }
  // Rounded down so the builder's alignment rounding cannot exceed it.
  const size_t spare = log.spare_size() & ~size_t{7};
  SpareMemoryAllocator allocator(log.spare(), spare);
  FlatBufferBuilder builder(spare, &allocator);
  builder.FinishSizePrefixed(Serializer(log, builder).build(), kFileIdentifier);
  uint8_t* data = builder.GetBufferPointer();
  const size_t size = builder.GetSize();
  if (data >= log.spare() && data + size <= log.spare() + spare) {
    return {data, size};
  }
  // The builder outgrew the reservation: a bound in event_records.h is too
  // small. Move the result into the caller's buffer if it fits.
  ET_LOG(Error,
         "ETDumpGen: the ETDump (%zu bytes) outgrew the room reserved for it "
         "(%zu bytes)",
         size,
         log.serialized_bound());
  if (size <= spare) {
    std::memmove(log.spare(), data, size);
    return {log.spare(), size};
  }
  return {nullptr, 0};
}

} // namespace internal
} // namespace etdump
} // namespace executorch
