#pragma once

// PlannedMemory: the planned buffers of one method on the heap, sized as its
// MethodMeta declares, behind the HierarchicalAllocator a MemoryManager
// takes. This is the one place hosted code (Module, the Python bindings, the
// runtime's test helpers) turns a MethodMeta into planned memory.
//
// A size the program declares as negative gets an empty buffer, so that
// Program::load_method, which checks every planned buffer, reports it with
// the method and buffer index.
//
// Ownership: the PlannedMemory owns the buffers; it must outlive every
// Method loaded with allocator(). Not copyable or movable (the allocator
// points into it).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/executor/program.h>

namespace executorch {
namespace extension {

class PlannedMemory final {
 public:
  // One buffer of each of `sizes` bytes (tests use this to build setups the
  // program did not ask for).
  explicit PlannedMemory(const std::vector<size_t>& sizes)
      : buffers_(sizes.begin(), sizes.end()),
        spans_(make_spans(buffers_)),
        allocator_({spans_.data(), spans_.size()}) {}

  // The buffers `meta` declares.
  explicit PlannedMemory(const ::executorch::runtime::MethodMeta& meta)
      : PlannedMemory(sizes_of(meta)) {}

  // The buffers `meta` declares, except the first `shared.size()`: those
  // are the caller's (SharedArenas), which must outlive this.
  PlannedMemory(const ::executorch::runtime::MethodMeta& meta,
                const std::vector<::executorch::runtime::Span<uint8_t>>& shared)
      : buffers_(owned_buffers(meta, shared.size())),
        spans_(make_spans(buffers_, shared)),
        allocator_({spans_.data(), spans_.size()}) {}

  PlannedMemory(const PlannedMemory&) = delete;
  PlannedMemory& operator=(const PlannedMemory&) = delete;
  PlannedMemory(PlannedMemory&&) = delete;
  PlannedMemory& operator=(PlannedMemory&&) = delete;

  ::executorch::runtime::HierarchicalAllocator* allocator() {
    return &allocator_;
  }

  // The sizes `meta` declares, negative ones as 0.
  static std::vector<size_t> sizes_of(
      const ::executorch::runtime::MethodMeta& meta) {
    std::vector<size_t> sizes;
    for (size_t i = 0; i < meta.num_memory_planned_buffers(); ++i) {
      const auto size = meta.memory_planned_buffer_size(i);
      sizes.push_back(size.ok() && *size > 0 ? static_cast<size_t>(*size) : 0);
    }
    return sizes;
  }

 private:
  // Buffers for what `meta` declares, empty for the first `num_shared`.
  static std::vector<std::vector<uint8_t>> owned_buffers(
      const ::executorch::runtime::MethodMeta& meta, size_t num_shared) {
    std::vector<size_t> sizes = sizes_of(meta);
    std::vector<std::vector<uint8_t>> buffers;
    for (size_t i = 0; i < sizes.size(); ++i) {
      buffers.emplace_back(i < num_shared ? 0 : sizes[i]);
    }
    return buffers;
  }

  static std::vector<::executorch::runtime::Span<uint8_t>> make_spans(
      std::vector<std::vector<uint8_t>>& buffers,
      const std::vector<::executorch::runtime::Span<uint8_t>>& shared = {}) {
    std::vector<::executorch::runtime::Span<uint8_t>> spans;
    for (size_t i = 0; i < buffers.size(); ++i) {
      spans.push_back(i < shared.size() ? shared[i]
                                        : ::executorch::runtime::Span<uint8_t>(
                                              buffers[i].data(),
                                              buffers[i].size()));
    }
    return spans;
  }

  std::vector<std::vector<uint8_t>> buffers_;
  std::vector<::executorch::runtime::Span<uint8_t>> spans_;
  ::executorch::runtime::HierarchicalAllocator allocator_;
};

// The first two planned buffers (memory ids 1 and 2) shared by every
// method of a program, each sized for the largest method: activations of
// methods that never run at once, and the mutable buffers that
// MemoryPlanningPass(share_mutable_buffers=True) places by name in buffer 2,
// so that a prefill and a decode method share a KV cache.
//
// Loading a method copies the initial values of its mutable buffers in:
// save_state() before loading one more method and restore_state() after
// keep the state the others have built up.
class SharedArenas final {
 public:
  explicit SharedArenas(const ::executorch::runtime::Program& program) {
    std::vector<size_t> sizes(2, 0);
    for (size_t m = 0; m < program.num_methods(); ++m) {
      const auto name = program.get_method_name(m);
      if (!name.ok()) {
        continue;
      }
      const auto meta = program.method_meta(*name);
      if (!meta.ok()) {
        continue;
      }
      const std::vector<size_t> method_sizes = PlannedMemory::sizes_of(*meta);
      for (size_t i = 0; i < sizes.size() && i < method_sizes.size(); ++i) {
        sizes[i] = std::max(sizes[i], method_sizes[i]);
      }
    }
    for (size_t size : sizes) {
      buffers_.emplace_back(size);
      spans_.emplace_back(buffers_.back().data(), size);
    }
  }

  SharedArenas(const SharedArenas&) = delete;
  SharedArenas& operator=(const SharedArenas&) = delete;

  const std::vector<::executorch::runtime::Span<uint8_t>>& spans() const {
    return spans_;
  }
  std::vector<uint8_t> save_state() const {
    return buffers_[1];
  }
  // Copies in place: loaded methods point into the buffer.
  void restore_state(const std::vector<uint8_t>& state) {
    std::copy(state.begin(), state.end(), buffers_[1].begin());
  }

 private:
  std::vector<std::vector<uint8_t>> buffers_;
  std::vector<::executorch::runtime::Span<uint8_t>> spans_;
};

} // namespace extension
} // namespace executorch
