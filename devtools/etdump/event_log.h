#pragma once

// EventLog: the append-only store ETDumpGen records into while a method runs.
// Recording is cheap (a few stores per event); the FlatBuffer is built only
// when the ETDump is requested.
//
// Memory: either a caller-owned buffer (never written past its end: when a
// record does not fit, append() refuses it) or, with no buffer, heap memory
// that grows as needed. In a caller's buffer, every record also reserves an
// upper bound of the bytes it will take in the serialized ETDump, so the
// ETDump is later built in the same buffer without running out of room.
//
// Records are addressed by their byte offset (a RecordId), which stays valid
// when heap memory moves. Each knows its own and its predecessor's size, so
// the log can be walked in both directions.

#include <cstddef>
#include <cstdint>

namespace executorch {
namespace etdump {
namespace internal {

using RecordId = uint32_t;
constexpr RecordId kNoRecord = UINT32_MAX;

enum class RecordKind : uint8_t {
  kString,
  kBlock,
  kAllocator,
  kProfileEvent,
  kAllocationEvent,
  kDebugEvent,
};

struct RecordHeader {
  uint32_t size;      // including this header
  uint32_t prev_size; // of the record before it; 0 for the first
  RecordKind kind;
  uint8_t reserved[3];
  // The FlatBuffers offset of what the record became, set while serializing.
  uint32_t serialized;
};

class EventLog {
 public:
  // Records into `buffer` (not owned) or, when it is null, into heap memory.
  // `base_bound` is the serialized size of the ETDump's fixed parts.
  EventLog(uint8_t* buffer, size_t capacity, size_t base_bound);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Appends a record with `payload_size` bytes of payload that will take at
  // most `serialized_bound` bytes in the ETDump. Returns its id, or kNoRecord
  // when it does not fit (the log is then full and stays full until clear()).
  RecordId append(RecordKind kind,
                  size_t payload_size,
                  size_t serialized_bound = 0);

  // The id of a string record holding `text` (the first `length` bytes),
  // added once per distinct text; kNoRecord when it does not fit.
  RecordId intern(const char* text, size_t length, size_t serialized_bound);

  RecordHeader* header(RecordId id) {
    return reinterpret_cast<RecordHeader*>(data_ + id);
  }
  void* payload(RecordId id) {
    return data_ + id + sizeof(RecordHeader);
  }
  const char* string(RecordId id);
  size_t string_length(RecordId id);

  // Walking: first() and next() go forward, last() and prev() backward;
  // kNoRecord past either end.
  RecordId first() const {
    return end_ == 0 ? kNoRecord : 0;
  }
  RecordId last() const {
    return end_ == 0 ? kNoRecord : last_;
  }
  RecordId next(RecordId id);
  RecordId prev(RecordId id);

  bool full() const {
    return full_;
  }
  bool is_caller_buffer() const {
    return owned_ == nullptr && data_ != nullptr;
  }
  // The unused part of a caller's buffer, where the ETDump is built; all of
  // it is available because records reserved their share.
  uint8_t* spare() {
    return data_ + end_;
  }
  size_t spare_size() const {
    return capacity_ - end_;
  }
  // Upper bound of the serialized size of everything recorded.
  size_t serialized_bound() const {
    return serialized_bound_;
  }

  // Forgets every record; the memory is kept.
  void clear();

 private:
  bool reserve(size_t bytes, size_t serialized_bound);

  uint8_t* data_;
  size_t capacity_;
  // Heap memory when recording without a caller buffer.
  uint8_t* owned_ = nullptr;
  size_t end_ = 0;
  RecordId last_ = 0;
  size_t base_bound_;
  size_t serialized_bound_ = 0;
  bool full_ = false;

  // Open-addressed table of interned strings (record ids), kept in the
  // object so that interning needs no memory from the log itself.
  static constexpr size_t kInternSlots = 512;
  RecordId interned_[kInternSlots];
};

} // namespace internal
} // namespace etdump
} // namespace executorch
