#pragma once

// The payloads ETDumpGen stores in its EventLog, one per record kind, and an
// upper bound of the bytes each takes once serialized into the ETDump
// FlatBuffer (what lets the ETDump be built inside a caller's buffer).
// Written by etdump_gen.cpp, read by etdump_serializer.cpp.

#include <cstddef>
#include <cstdint>

#include <executorch/devtools/etdump/event_log.h>

namespace executorch {
namespace etdump {
namespace internal {

struct BlockRecord {
  RecordId name;
  int32_t bundled_input_index;
};

struct AllocatorRecord {
  RecordId name;
};

// Followed by metadata_length bytes of delegate metadata.
struct ProfileRecord {
  RecordId name; // kNoRecord for a delegate event identified by an int
  int32_t chain_index;
  int32_t instruction_id;
  int32_t delegate_id_int;
  RecordId delegate_id_str;
  uint32_t metadata_length;
  uint64_t start_time;
  uint64_t end_time;
};

struct AllocationRecord {
  int32_t allocator_id;
  uint32_t unused;
  uint64_t size;
};

// ETDump's ValueType numbering.
enum class LoggedValueType : uint8_t {
  kNull = 0,
  kInt = 1,
  kBool = 2,
  kFloat = 3,
  kDouble = 4,
  kTensor = 5,
  kTensorList = 6,
};

// Followed by num_tensors TensorRecords (one for kTensor).
struct DebugRecord {
  uint64_t chain_index;
  int32_t instruction_id;
  int32_t delegate_id_int;
  RecordId delegate_id_str;
  RecordId name;
  LoggedValueType type;
  uint8_t is_output;
  uint16_t unused;
  uint32_t num_tensors;
  union {
    int64_t int_value;
    double double_value;
    bool bool_value;
  } scalar;
};

// Followed by dim sizes then dim strides (int64 each).
struct TensorRecord {
  int8_t scalar_type;
  uint8_t unused[3];
  uint32_t dim;
  int64_t offset;
  // The FlatBuffers offset of the Tensor table, set while serializing.
  uint32_t serialized;
  uint32_t unused2;
};

inline size_t tensor_record_size(size_t dim) {
  return sizeof(TensorRecord) + 2 * dim * sizeof(int64_t);
}

// Serialized size bounds, generous on purpose: every field padded to 8
// bytes, a full vtable per table (FlatBuffers shares identical ones) and the
// builder's 4 bytes of bookkeeping per vtable.
constexpr size_t table_bound(size_t num_fields) {
  return 4 + 8 * num_fields + (4 + 2 * num_fields) + 8 + 4;
}
constexpr size_t vector_bound(size_t count, size_t element_size) {
  return 4 + count * element_size + 8;
}
constexpr size_t string_bound(size_t length) {
  return 4 + length + 1 + 8;
}
// An Event table and its entry in RunData.events.
constexpr size_t kEventWrapperBound = table_bound(3) + 4;
// The size prefix, root offset, identifier, ETDump table and run_data
// vector, plus the builder's scratch for one table's fields and alignment.
constexpr size_t kETDumpBaseBound =
    4 + 4 + 4 + table_bound(2) + vector_bound(0, 4) + 8 * 8 + 64;
constexpr size_t kBlockBound =
    table_bound(4) + 2 * vector_bound(0, 4) + 4 /* run_data entry */;
constexpr size_t kAllocatorBound = table_bound(1) + 4;
constexpr size_t kAllocationEventBound = table_bound(2) + kEventWrapperBound;

inline size_t profile_event_bound(size_t metadata_length) {
  return table_bound(8) + kEventWrapperBound +
         (metadata_length > 0 ? vector_bound(metadata_length, 1) : 0);
}

inline size_t tensor_bound(size_t dim) {
  return table_bound(4) + 2 * vector_bound(dim, 8);
}

// A debug event without its tensors (add tensor_bound for each, and
// vector_bound(n, 4) + table_bound(1) for a list).
constexpr size_t kDebugEventBound = table_bound(6) + kEventWrapperBound +
                                    table_bound(8) /* Value */ +
                                    2 * table_bound(1) /* scalar, output */;

} // namespace internal
} // namespace etdump
} // namespace executorch
