#pragma once

// Program: a loaded .pte file. load() checks the header and verifies the
// flatbuffer; after that the Program is immutable.
//
// Threading contract: a loaded Program may be shared by any number of
// threads. Each thread calls load_method() with a MemoryManager of its own
// (method allocator, planned buffers, temp allocator) and runs the Method it
// gets; no two threads use one Method or one MemoryManager at the same time.
// The DataLoader must allow concurrent loads (the loaders in
// extension/data_loader do). Kernels and backends are registered once,
// before the threads start. extension/module/shared_program_thread_test.cpp
// checks this, also under ThreadSanitizer (scripts/tsan_test.sh).

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/data_loader.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/pte_data_map.h>

namespace executorch_flatbuffer {
struct Program;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

class EventTracer;

class Program final {
 public:
  enum class Verification : uint8_t {
    // Check the header and verify the flatbuffer's structure (every table,
    // vector and string lies inside the data). Indices between tables are
    // checked as methods load.
    Minimal,
    // Currently the same checks as Minimal: the structural verification is
    // always run because the file is untrusted.
    InternalConsistency,
  };

  enum class HeaderStatus {
    // The file identifier is present and is a version this runtime reads.
    CompatibleVersion,
    // The file identifier names a version this runtime cannot read.
    IncompatibleVersion,
    // No file identifier where one should be.
    NotPresent,
    // Fewer bytes than a header needs.
    ShortData,
  };

  // Bytes to read to check the header with check_header().
  static constexpr size_t kMinHeadBytes = 64;

  static HeaderStatus check_header(const void* data, size_t size);

  // Loads a program through `loader`, which must outlive the Program.
  ET_NODISCARD static Result<Program> load(
      DataLoader* loader, Verification verification = Verification::Minimal);

  size_t num_methods() const;
  Result<const char*> get_method_name(size_t method_index) const;
  Result<MethodMeta> method_meta(const char* method_name) const;

  // Loads a method. Its memory comes from `memory_manager`, which (like the
  // Program) must outlive the Method. `event_tracer`, when given, receives
  // the method's load, execute, per-instruction and delegate events (see
  // runtime/core/event_tracer.h) and must outlive the Method too.
  // `named_data_map` holds data stored outside the .pte (a .ptd file:
  // external constants, delegate weights); it must outlive the Method too.
  ET_NODISCARD Result<Method> load_method(
      const char* method_name,
      MemoryManager* memory_manager,
      EventTracer* event_tracer = nullptr,
      const NamedDataMap* named_data_map = nullptr) const;

  // The program's own named data (delegate weights stored by key); empty
  // when the program has none. Lives as long as the Program.
  Result<const NamedDataMap*> get_named_data_map() const {
    return static_cast<const NamedDataMap*>(&pte_data_map_);
  }

  // Bytes of constant `buffer_index` (an index into the constant segment's
  // offsets), checked to hold at least `nbytes`.
  ET_NODISCARD Result<const void*> get_constant_buffer_data(
      size_t buffer_index, size_t nbytes) const;

  // Loads segment `segment_info.segment_index` through the data loader.
  ET_NODISCARD Result<FreeableBuffer> LoadSegment(
      const DataLoader::SegmentInfo& segment_info) const;

  // Copies `size` bytes of the initial state of a mutable tensor into
  // `buffer`: entry `offset_index` of mutable_data_segments
  // `mutable_data_segments_index`, checked to lie inside its segment.
  ET_NODISCARD Error
  load_mutable_subsegment_into(size_t mutable_data_segments_index,
                               size_t offset_index,
                               size_t size,
                               void* buffer) const;

  // Bytes of inline delegate data `index` (Program.backend_delegate_data).
  ET_NODISCARD Result<FreeableBuffer> get_inline_delegate_data(
      size_t index) const;

  const executorch_flatbuffer::Program* internal_program() const {
    return internal_program_;
  }

  Program(Program&&) = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  Program& operator=(Program&&) = delete;
  ~Program() = default;

 private:
  Program(DataLoader* loader,
          size_t segment_base_offset,
          FreeableBuffer&& program_data,
          const executorch_flatbuffer::Program* internal_program,
          FreeableBuffer&& constant_segment_data,
          PteDataMap&& pte_data_map)
      : program_data_(std::move(program_data)),
        loader_(loader),
        internal_program_(internal_program),
        segment_base_offset_(segment_base_offset),
        constant_segment_data_(std::move(constant_segment_data)),
        pte_data_map_(std::move(pte_data_map)) {}

  FreeableBuffer program_data_;
  DataLoader* loader_;
  const executorch_flatbuffer::Program* internal_program_;
  // Where segments start in the file (0 when there is no extended header).
  size_t segment_base_offset_;
  FreeableBuffer constant_segment_data_;
  PteDataMap pte_data_map_;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::Program;
} // namespace executor
} // namespace torch
