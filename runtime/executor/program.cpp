#include <executorch/runtime/executor/program.h>

#include <cstring>

#include <flatbuffers/flatbuffers.h>

#include <executorch/runtime/core/event_tracer_hooks.h>
#include <executorch/runtime/platform/log.h>
#include <executorch/schema/extended_header.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {

namespace {

constexpr size_t kIdentifierOffset = 4;
constexpr size_t kIdentifierSize = 4;

// True when [offset, offset + size) lies inside [0, limit), without overflow.
bool range_fits(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

// Checks the flatbuffer's structure. Every table, vector and string offset
// is bounds-checked, so later field access cannot read outside the buffer.
// This runs for every verification level: the file is untrusted and reading
// an unverified flatbuffer is undefined behaviour.
Error verify_flatbuffer(const void* data, size_t size) {
  // Flatbuffer fields are read in place, up to 8 bytes wide: misaligned
  // data would make every read undefined behaviour.
  ET_CHECK_OR_RETURN_ERROR(
      reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0,
      InvalidArgument,
      "Program data at %p is not aligned to %zu bytes; load it into an "
      "aligned buffer",
      data,
      alignof(uint64_t));
  ET_CHECK_OR_RETURN_ERROR(
      size >= 2 * sizeof(flatbuffers::uoffset_t),
      InvalidProgram,
      "Program data of %zu bytes is too small for a flatbuffer",
      size);
  flatbuffers::uoffset_t root = 0;
  std::memcpy(&root, data, sizeof(root));
  ET_CHECK_OR_RETURN_ERROR(
      flatbuffers::EndianScalar(root) < size,
      InvalidProgram,
      "Flatbuffer root offset %u is outside the %zu bytes of program data",
      static_cast<unsigned>(flatbuffers::EndianScalar(root)),
      size);
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data), size);
  ET_CHECK_OR_RETURN_ERROR(
      executorch_flatbuffer::VerifyProgramBuffer(verifier),
      InvalidProgram,
      "Program flatbuffer failed verification (%zu bytes): the file is "
      "truncated or corrupt, or nests deeper than 64 or holds more than a "
      "million tables",
      size);
  return Error::Ok;
}

// Whether a verified vector's elements sit at addresses aligned for them.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr ||
      reinterpret_cast<uintptr_t>(vector->Data()) % alignof(T) == 0;
}

// The FlatBuffers verifier (2.0) checks a vector's length field, not the
// alignment of 8-byte elements after it: a crafted file can put int64 or
// double elements at 4-byte offsets, and reading those in place is
// undefined behaviour (a fault on cores without unaligned 8-byte loads).
// These are every vector of 8-byte elements in the schema.
Error check_wide_vectors_aligned(const executorch_flatbuffer::Program* program) {
  ET_CHECK_OR_RETURN_ERROR(elements_aligned(program->segments()),
                           InvalidProgram,
                           "Program.segments is not 8-byte aligned");
  ET_CHECK_OR_RETURN_ERROR(
      program->constant_segment() == nullptr ||
          elements_aligned(program->constant_segment()->offsets()),
      InvalidProgram,
      "Program.constant_segment.offsets is not 8-byte aligned");
  if (const auto* mutable_segments = program->mutable_data_segments()) {
    for (flatbuffers::uoffset_t i = 0; i < mutable_segments->size(); ++i) {
      ET_CHECK_OR_RETURN_ERROR(
          elements_aligned(mutable_segments->Get(i)->offsets()),
          InvalidProgram,
          "Program.mutable_data_segments[%u].offsets is not 8-byte aligned",
          static_cast<unsigned>(i));
    }
  }
  const auto* plans = program->execution_plan();
  for (flatbuffers::uoffset_t p = 0; plans != nullptr && p < plans->size();
       ++p) {
    const auto* plan = plans->Get(p);
    ET_CHECK_OR_RETURN_ERROR(
        elements_aligned(plan->non_const_buffer_sizes()),
        InvalidProgram,
        "Program.execution_plan[%u].non_const_buffer_sizes is not 8-byte "
        "aligned",
        static_cast<unsigned>(p));
    const auto* values = plan->values();
    for (flatbuffers::uoffset_t v = 0; values != nullptr && v < values->size();
         ++v) {
      const auto* value = values->Get(v);
      const auto* ints = value->val_as_IntList();
      const auto* doubles = value->val_as_DoubleList();
      ET_CHECK_OR_RETURN_ERROR(
          (ints == nullptr || elements_aligned(ints->items())) &&
              (doubles == nullptr || elements_aligned(doubles->items())),
          InvalidProgram,
          "Program.execution_plan[%u].values[%u]: list items are not "
          "8-byte aligned",
          static_cast<unsigned>(p),
          static_cast<unsigned>(v));
    }
  }
  return Error::Ok;
}

// Checks that every DataSegment lies inside the file.
Error check_segments(const executorch_flatbuffer::Program* program,
                     size_t segment_base_offset,
                     size_t file_size) {
  const auto* segments = program->segments();
  if (segments == nullptr || segments->size() == 0) {
    return Error::Ok;
  }
  // Upstream writes an empty constant segment, and no extended header, for a
  // program without constants: segments that hold no bytes need no base.
  bool all_empty = true;
  for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
    all_empty = all_empty && segments->Get(i)->size() == 0;
  }
  if (all_empty && segment_base_offset == 0) {
    return Error::Ok;
  }
  ET_CHECK_OR_RETURN_ERROR(
      segment_base_offset > 0 && segment_base_offset <= file_size,
      InvalidProgram,
      "Program has %u segments but segment_base_offset %zu is invalid for a "
      "file of %zu bytes",
      segments->size(),
      segment_base_offset,
      file_size);
  const uint64_t available = file_size - segment_base_offset;
  for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
    const auto* segment = segments->Get(i);
    ET_CHECK_OR_RETURN_ERROR(
        range_fits(segment->offset(), segment->size(), available),
        InvalidProgram,
        "Segment %u (offset %llu, size %llu) extends past the end of the "
        "file: %llu bytes of segment data available",
        i,
        static_cast<unsigned long long>(segment->offset()),
        static_cast<unsigned long long>(segment->size()),
        static_cast<unsigned long long>(available));
  }
  return Error::Ok;
}

// The constant segment's offsets, or null when constants are stored inline
// in Program.constant_buffer (older files) or there are none.
const flatbuffers::Vector<uint64_t>* constant_segment_offsets(
    const executorch_flatbuffer::Program* program) {
  const auto* constant_segment = program->constant_segment();
  if (constant_segment == nullptr || constant_segment->offsets() == nullptr ||
      constant_segment->offsets()->size() == 0) {
    return nullptr;
  }
  return constant_segment->offsets();
}

const executorch_flatbuffer::ExecutionPlan* find_plan(
    const executorch_flatbuffer::Program* program, const char* name) {
  const auto* plans = program->execution_plan();
  if (plans == nullptr || name == nullptr) {
    return nullptr;
  }
  for (const auto* plan : *plans) {
    if (plan->name() != nullptr &&
        std::strcmp(plan->name()->c_str(), name) == 0) {
      return plan;
    }
  }
  return nullptr;
}

} // namespace

Program::HeaderStatus Program::check_header(const void* data, size_t size) {
  if (data == nullptr || size < kIdentifierOffset + kIdentifierSize) {
    return HeaderStatus::ShortData;
  }
  const char* id = static_cast<const char*>(data) + kIdentifierOffset;
  const char* expected = executorch_flatbuffer::ProgramIdentifier();
  if (std::memcmp(id, expected, kIdentifierSize) == 0) {
    return HeaderStatus::CompatibleVersion;
  }
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (id[0] == expected[0] && id[1] == expected[1] && is_digit(id[2]) &&
      is_digit(id[3])) {
    return HeaderStatus::IncompatibleVersion;
  }
  return HeaderStatus::NotPresent;
}

Result<Program> Program::load(DataLoader* loader, Verification verification) {
  // Both levels verify the flatbuffer fully (see verify_flatbuffer); indices
  // into tables are checked as methods load.
  (void)verification;
  ET_CHECK_OR_RETURN_ERROR(
      loader != nullptr, InvalidArgument, "Program::load: null data loader");
  Result<size_t> file_size_result = loader->size();
  if (!file_size_result.ok()) {
    ET_LOG(Error, "Program::load: cannot get the size of the data");
    return file_size_result.error();
  }
  const size_t file_size = *file_size_result;

  // Read the head: identifier plus the optional extended header.
  size_t program_size = file_size;
  size_t segment_base_offset = 0;
  {
    const size_t head_size =
        file_size < kMinHeadBytes ? file_size : kMinHeadBytes;
    Result<FreeableBuffer> head = loader->load(
        0,
        head_size,
        DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::Program));
    if (!head.ok()) {
      ET_LOG(Error,
             "Program::load: failed to read the %zu-byte header",
             head_size);
      return head.error();
    }
    const HeaderStatus status = check_header(head->data(), head->size());
    switch (status) {
      case HeaderStatus::CompatibleVersion:
        break;
      case HeaderStatus::ShortData:
        ET_LOG(Error,
               "Program::load: file of %zu bytes is too short for a header",
               file_size);
        return Error::InvalidProgram;
      case HeaderStatus::IncompatibleVersion: {
        const char* id =
            static_cast<const char*>(head->data()) + kIdentifierOffset;
        ET_LOG(Error,
               "Program::load: file identifier '%.4s' is a version this "
               "runtime cannot read (expected '%s')",
               id,
               executorch_flatbuffer::ProgramIdentifier());
        return Error::InvalidProgram;
      }
      case HeaderStatus::NotPresent:
        ET_LOG(Error,
               "Program::load: no '%s' file identifier at byte %zu; not a .pte "
               "file",
               executorch_flatbuffer::ProgramIdentifier(),
               kIdentifierOffset);
        return Error::InvalidProgram;
    }
    Result<ExtendedHeader> header =
        ExtendedHeader::Parse(head->data(), head->size());
    if (header.ok()) {
      ET_CHECK_OR_RETURN_ERROR(
          header->program_size <= file_size,
          InvalidProgram,
          "Extended header program_size %llu exceeds the file size %zu "
          "(truncated file?)",
          static_cast<unsigned long long>(header->program_size),
          file_size);
      ET_CHECK_OR_RETURN_ERROR(
          header->segment_base_offset <= file_size,
          InvalidProgram,
          "Extended header segment_base_offset %llu exceeds the file size %zu "
          "(truncated file?)",
          static_cast<unsigned long long>(header->segment_base_offset),
          file_size);
      program_size = static_cast<size_t>(header->program_size);
      segment_base_offset = static_cast<size_t>(header->segment_base_offset);
    } else if (header.error() != Error::NotFound) {
      ET_LOG(Error, "Program::load: malformed extended header");
      return header.error();
    }
  }

  Result<FreeableBuffer> program_data = loader->load(
      0,
      program_size,
      DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::Program));
  if (!program_data.ok()) {
    ET_LOG(Error,
           "Program::load: failed to read %zu bytes of program data",
           program_size);
    return program_data.error();
  }
  ET_CHECK_OK_OR_RETURN_ERROR(
      verify_flatbuffer(program_data->data(), program_data->size()));
  const executorch_flatbuffer::Program* flatbuffer_program =
      executorch_flatbuffer::GetProgram(program_data->data());
  ET_CHECK_OK_OR_RETURN_ERROR(check_wide_vectors_aligned(flatbuffer_program));
  ET_CHECK_OK_OR_RETURN_ERROR(
      check_segments(flatbuffer_program, segment_base_offset, file_size));

  // Load the constant segment once; tensors point into it.
  FreeableBuffer constant_segment_data;
  const auto* offsets = constant_segment_offsets(flatbuffer_program);
  if (offsets != nullptr) {
    const uint32_t segment_index =
        flatbuffer_program->constant_segment()->segment_index();
    const auto* segments = flatbuffer_program->segments();
    const uint32_t num_segments = segments == nullptr ? 0 : segments->size();
    ET_CHECK_OR_RETURN_ERROR(
        segment_index < num_segments,
        InvalidProgram,
        "constant_segment.segment_index %u out of range: %u segments",
        segment_index,
        num_segments);
    const auto* segment = segments->Get(segment_index);
    Result<FreeableBuffer> constants = loader->load(
        segment_base_offset + segment->offset(),
        segment->size(),
        DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::Constant,
                                segment_index));
    if (!constants.ok()) {
      ET_LOG(Error,
             "Program::load: failed to load constant segment %u",
             segment_index);
      return constants.error();
    }
    for (flatbuffers::uoffset_t i = 0; i < offsets->size(); ++i) {
      ET_CHECK_OR_RETURN_ERROR(
          offsets->Get(i) <= constants->size(),
          InvalidProgram,
          "constant_segment.offsets[%u] = %llu is past the end of the %zu-byte "
          "constant segment",
          i,
          static_cast<unsigned long long>(offsets->Get(i)),
          constants->size());
    }
    constant_segment_data = std::move(*constants);
  }

  Result<PteDataMap> pte_data_map =
      PteDataMap::create(loader, segment_base_offset, flatbuffer_program);
  if (!pte_data_map.ok()) {
    return pte_data_map.error();
  }
  return Program(loader,
                 segment_base_offset,
                 std::move(*program_data),
                 flatbuffer_program,
                 std::move(constant_segment_data),
                 std::move(*pte_data_map));
}

size_t Program::num_methods() const {
  const auto* plans = internal_program_->execution_plan();
  return plans == nullptr ? 0 : plans->size();
}

Result<const char*> Program::get_method_name(size_t method_index) const {
  ET_CHECK_OR_RETURN_ERROR(method_index < num_methods(),
                           InvalidArgument,
                           "Method index %zu out of range: %zu methods",
                           method_index,
                           num_methods());
  const auto* name =
      internal_program_->execution_plan()->Get(method_index)->name();
  ET_CHECK_OR_RETURN_ERROR(
      name != nullptr, InvalidProgram, "Method %zu has no name", method_index);
  return name->c_str();
}

Result<MethodMeta> Program::method_meta(const char* method_name) const {
  const auto* plan = find_plan(internal_program_, method_name);
  ET_CHECK_OR_RETURN_ERROR(plan != nullptr,
                           InvalidArgument,
                           "No method named '%s' in the program",
                           method_name == nullptr ? "(null)" : method_name);
  return MethodMeta(plan);
}

Result<Method> Program::load_method(const char* method_name,
                                    MemoryManager* memory_manager,
                                    EventTracer* event_tracer,
                                    const NamedDataMap* named_data_map) const {
  internal::EventTracerProfileMethodScope scope(event_tracer,
                                                "Program::load_method");
  const auto* plan = find_plan(internal_program_, method_name);
  ET_CHECK_OR_RETURN_ERROR(plan != nullptr,
                           InvalidArgument,
                           "No method named '%s' in the program",
                           method_name == nullptr ? "(null)" : method_name);
  ET_CHECK_OR_RETURN_ERROR(
      memory_manager != nullptr &&
          memory_manager->method_allocator() != nullptr,
      InvalidArgument,
      "load_method('%s'): a MemoryManager with a method allocator is required",
      method_name);
  Method method(this,
                memory_manager,
                event_tracer,
                memory_manager->temp_allocator(),
                named_data_map);
  ET_CHECK_OK_OR_RETURN_ERROR(method.init(plan));
  return method;
}

Result<const void*> Program::get_constant_buffer_data(size_t buffer_index,
                                                      size_t nbytes) const {
  const auto* offsets = constant_segment_offsets(internal_program_);
  if (offsets != nullptr) {
    ET_CHECK_OR_RETURN_ERROR(
        buffer_index < offsets->size(),
        InvalidProgram,
        "Constant buffer index %zu out of range: %u constants in the segment",
        buffer_index,
        offsets->size());
    const uint64_t offset = offsets->Get(buffer_index);
    ET_CHECK_OR_RETURN_ERROR(
        range_fits(offset, nbytes, constant_segment_data_.size()),
        InvalidProgram,
        "Constant buffer %zu (offset %llu, %zu bytes) extends past the end of "
        "the %zu-byte constant segment",
        buffer_index,
        static_cast<unsigned long long>(offset),
        nbytes,
        constant_segment_data_.size());
    return static_cast<const uint8_t*>(constant_segment_data_.data()) + offset;
  }
  const auto* buffers = internal_program_->constant_buffer();
  const size_t num_buffers = buffers == nullptr ? 0 : buffers->size();
  ET_CHECK_OR_RETURN_ERROR(buffer_index < num_buffers,
                           InvalidProgram,
                           "Constant buffer index %zu out of range: %zu inline "
                           "constant buffers",
                           buffer_index,
                           num_buffers);
  const auto* storage = buffers->Get(buffer_index)->storage();
  const size_t size = storage == nullptr ? 0 : storage->size();
  ET_CHECK_OR_RETURN_ERROR(nbytes <= size,
                           InvalidProgram,
                           "Inline constant buffer %zu has %zu bytes, tensor "
                           "needs %zu",
                           buffer_index,
                           size,
                           nbytes);
  return storage == nullptr ? nullptr
                            : static_cast<const void*>(storage->data());
}

Result<FreeableBuffer> Program::LoadSegment(
    const DataLoader::SegmentInfo& segment_info) const {
  const auto* segments = internal_program_->segments();
  const size_t num_segments = segments == nullptr ? 0 : segments->size();
  ET_CHECK_OR_RETURN_ERROR(segment_info.segment_index < num_segments,
                           InvalidProgram,
                           "Segment index %zu out of range: %zu segments",
                           segment_info.segment_index,
                           num_segments);
  // Bounds were checked against the file size at load.
  const auto* segment = segments->Get(segment_info.segment_index);
  return loader_->load(
      segment_base_offset_ + segment->offset(), segment->size(), segment_info);
}

Error Program::load_mutable_subsegment_into(size_t mutable_data_segments_index,
                                            size_t offset_index,
                                            size_t size,
                                            void* buffer) const {
  const auto* mutable_segments = internal_program_->mutable_data_segments();
  const size_t count =
      mutable_segments == nullptr ? 0 : mutable_segments->size();
  ET_CHECK_OR_RETURN_ERROR(mutable_data_segments_index < count,
                           InvalidProgram,
                           "mutable_data_segments index %zu out of range: %zu "
                           "entries",
                           mutable_data_segments_index,
                           count);
  const auto* subsegment = mutable_segments->Get(mutable_data_segments_index);
  const auto* offsets = subsegment->offsets();
  const size_t num_offsets = offsets == nullptr ? 0 : offsets->size();
  ET_CHECK_OR_RETURN_ERROR(offset_index < num_offsets,
                           InvalidProgram,
                           "Mutable data index %zu out of range: %zu entries "
                           "in mutable_data_segments[%zu]",
                           offset_index,
                           num_offsets,
                           mutable_data_segments_index);
  const auto* segments = internal_program_->segments();
  const size_t num_segments = segments == nullptr ? 0 : segments->size();
  const uint32_t segment_index = subsegment->segment_index();
  ET_CHECK_OR_RETURN_ERROR(segment_index < num_segments,
                           InvalidProgram,
                           "mutable_data_segments[%zu].segment_index %u out of "
                           "range: %zu segments",
                           mutable_data_segments_index,
                           segment_index,
                           num_segments);
  const auto* segment = segments->Get(segment_index);
  const uint64_t offset = offsets->Get(offset_index);
  ET_CHECK_OR_RETURN_ERROR(
      range_fits(offset, size, segment->size()),
      InvalidProgram,
      "Mutable data %zu (offset %llu, %zu bytes) extends past the end of the "
      "%llu-byte segment %u",
      offset_index,
      static_cast<unsigned long long>(offset),
      size,
      static_cast<unsigned long long>(segment->size()),
      segment_index);
  // Entries are stored in order: one that runs into the next was written
  // for a smaller tensor (another dtype or shape).
  if (offset_index + 1 < num_offsets) {
    const uint64_t next = offsets->Get(offset_index + 1);
    ET_CHECK_OR_RETURN_ERROR(
        next >= offset && size <= next - offset,
        InvalidProgram,
        "Mutable data %zu holds %llu bytes (up to the next entry) but %zu "
        "are needed",
        offset_index,
        static_cast<unsigned long long>(next >= offset ? next - offset : 0),
        size);
  }
  return loader_->load_into(
      segment_base_offset_ + segment->offset() + offset,
      size,
      DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::Mutable,
                              segment_index),
      buffer);
}

Result<FreeableBuffer> Program::get_inline_delegate_data(size_t index) const {
  const auto* data = internal_program_->backend_delegate_data();
  const size_t count = data == nullptr ? 0 : data->size();
  ET_CHECK_OR_RETURN_ERROR(index < count,
                           InvalidProgram,
                           "Inline delegate data index %zu out of range: %zu "
                           "entries",
                           index,
                           count);
  const auto* bytes = data->Get(index)->data();
  if (bytes == nullptr) {
    return FreeableBuffer(nullptr, 0, nullptr);
  }
  return FreeableBuffer(bytes->data(), bytes->size(), nullptr);
}

} // namespace runtime
} // namespace executorch
