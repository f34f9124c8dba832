#include <executorch/devtools/etdump/event_log.h>

#include <cstdlib>
#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace etdump {
namespace internal {

namespace {

constexpr size_t kRecordAlignment = 8;
constexpr size_t kInitialHeapCapacity = 64 * 1024;

size_t align_up(size_t n) {
  return (n + kRecordAlignment - 1) & ~(kRecordAlignment - 1);
}

struct StringPayload {
  uint32_t hash;
  uint32_t length;
  // followed by length bytes and a terminating zero
};

uint32_t fnv1a(const char* text, size_t length) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < length; ++i) {
    hash = (hash ^ static_cast<uint8_t>(text[i])) * 16777619u;
  }
  return hash;
}

} // namespace

EventLog::EventLog(uint8_t* buffer, size_t capacity, size_t base_bound)
    : data_(nullptr), capacity_(0), base_bound_(base_bound) {
  if (buffer != nullptr) {
    // Records hold 8-byte fields: start at an aligned address.
    const auto address = reinterpret_cast<uintptr_t>(buffer);
    const size_t skip = align_up(address) - address;
    data_ = buffer + (skip < capacity ? skip : capacity);
    capacity_ = skip < capacity ? capacity - skip : 0;
  }
  clear();
}

EventLog::~EventLog() {
  std::free(owned_);
}

void EventLog::clear() {
  end_ = 0;
  last_ = 0;
  serialized_bound_ = base_bound_;
  full_ = false;
  for (RecordId& slot : interned_) {
    slot = kNoRecord;
  }
}

bool EventLog::reserve(size_t bytes, size_t serialized_bound) {
  if (full_) {
    return false;
  }
  if (is_caller_buffer()) {
    // A caller's buffer: the records and the ETDump they will become must
    // both fit.
    if (end_ + bytes + serialized_bound_ + serialized_bound > capacity_) {
      full_ = true;
      return false;
    }
    return true;
  }
  if (end_ + bytes > UINT32_MAX - 1) {
    full_ = true;
    return false;
  }
  if (end_ + bytes > capacity_) {
    size_t grown = capacity_ == 0 ? kInitialHeapCapacity : capacity_ * 2;
    while (grown < end_ + bytes) {
      grown *= 2;
    }
    auto* moved = static_cast<uint8_t*>(std::realloc(owned_, grown));
    if (moved == nullptr) {
      full_ = true;
      return false;
    }
    owned_ = moved;
    data_ = moved;
    capacity_ = grown;
  }
  return true;
}

RecordId EventLog::append(RecordKind kind,
                          size_t payload_size,
                          size_t serialized_bound) {
  const size_t size = align_up(sizeof(RecordHeader) + payload_size);
  if (!reserve(size, serialized_bound)) {
    return kNoRecord;
  }
  const RecordId id = static_cast<RecordId>(end_);
  RecordHeader* record = header(id);
  record->size = static_cast<uint32_t>(size);
  record->prev_size = end_ == 0 ? 0 : header(last_)->size;
  record->kind = kind;
  record->serialized = 0;
  last_ = id;
  end_ += size;
  serialized_bound_ += serialized_bound;
  return id;
}

RecordId EventLog::intern(const char* text,
                          size_t length,
                          size_t serialized_bound) {
  const uint32_t hash = fnv1a(text, length);
  size_t slot = hash % kInternSlots;
  for (size_t probe = 0; probe < kInternSlots; ++probe) {
    const RecordId candidate = interned_[slot];
    if (candidate == kNoRecord) {
      break;
    }
    const auto* existing = static_cast<StringPayload*>(payload(candidate));
    if (existing->hash == hash && existing->length == length &&
        std::memcmp(string(candidate), text, length) == 0) {
      return candidate;
    }
    slot = (slot + 1) % kInternSlots;
  }
  const RecordId id = append(RecordKind::kString,
                             sizeof(StringPayload) + length + 1,
                             serialized_bound);
  if (id == kNoRecord) {
    return kNoRecord;
  }
  auto* created = static_cast<StringPayload*>(payload(id));
  created->hash = hash;
  created->length = static_cast<uint32_t>(length);
  char* chars = reinterpret_cast<char*>(created + 1);
  std::memcpy(chars, text, length);
  chars[length] = '\0';
  // A full table only stops deduplication; the string is still recorded.
  if (interned_[slot] == kNoRecord) {
    interned_[slot] = id;
  }
  return id;
}

const char* EventLog::string(RecordId id) {
  return reinterpret_cast<const char*>(
      static_cast<StringPayload*>(payload(id)) + 1);
}

size_t EventLog::string_length(RecordId id) {
  return static_cast<StringPayload*>(payload(id))->length;
}

RecordId EventLog::next(RecordId id) {
  const size_t following = id + header(id)->size;
  return following >= end_ ? kNoRecord : static_cast<RecordId>(following);
}

RecordId EventLog::prev(RecordId id) {
  return id == 0 ? kNoRecord : id - header(id)->prev_size;
}

} // namespace internal
} // namespace etdump
} // namespace executorch
