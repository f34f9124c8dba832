#pragma once

// PteDataMap: the named data of a .pte file (Program.named_data), each key
// naming one of the program's data segments. Delegates look up their
// weights here (upstream's XNNPACK delegate stores every constant under the
// SHA-256 of its bytes, so identical weights are stored once).
//
// Ownership: the map reads through the Program's DataLoader and points into
// the Program's flatbuffer, so it must not outlive the Program. get_data()
// loads the segment through the loader on each call (an mmap loader maps it,
// a file loader reads it into memory the buffer owns).

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/data_loader.h>
#include <executorch/runtime/core/named_data_map.h>

namespace executorch_flatbuffer {
struct Program;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

class PteDataMap final : public NamedDataMap {
 public:
  // Checks that every entry of `program`'s named_data has a key and a
  // segment index within its segments (whose ranges Program::load
  // checked). Errors: InvalidProgram naming the entry.
  ET_NODISCARD static Result<PteDataMap> create(
      DataLoader* loader,
      size_t segment_base_offset,
      const executorch_flatbuffer::Program* program);

  // Named data carries no tensor layout in a .pte: always NotFound.
  ET_NODISCARD Result<const TensorLayout> get_tensor_layout(
      std::string_view key) const override;
  ET_NODISCARD Result<FreeableBuffer> get_data(
      std::string_view key) const override;
  ET_NODISCARD Error load_data_into(std::string_view key,
                                    void* buffer,
                                    size_t size) const override;
  ET_NODISCARD Result<uint32_t> get_num_keys() const override;
  ET_NODISCARD Result<const char*> get_key(uint32_t index) const override;

 private:
  PteDataMap(DataLoader* loader,
             size_t segment_base_offset,
             const executorch_flatbuffer::Program* program)
      : loader_(loader),
        segment_base_offset_(segment_base_offset),
        program_(program) {}

  // The segment index of `key`, or NotFound.
  Result<uint32_t> find(std::string_view key) const;

  DataLoader* loader_;
  size_t segment_base_offset_;
  const executorch_flatbuffer::Program* program_;
};

} // namespace runtime
} // namespace executorch
