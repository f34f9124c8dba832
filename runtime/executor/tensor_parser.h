#pragma once

// Turns a serialized Tensor into a runtime Tensor whose metadata lives in the
// method allocator and whose data points at a constant, at planned memory, or
// (for inputs and outputs the caller provides) nowhere yet.

#include <cstddef>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/memory_manager.h>

namespace executorch_flatbuffer {
struct Tensor;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

class Program;

namespace internal {

// Where a serialized value sits, for error messages.
struct ValueLocation {
  const char* method_name;
  size_t value_index;
};

// A mutable buffer whose initial value the program stores: planned memory
// with a data_buffer_idx into the mutable data segment.
bool has_initial_state(const executorch_flatbuffer::Tensor* s_tensor);

// Copies that initial value (`nbytes`) into `data`; the error says which
// value and entry when the stored state does not fit the tensor.
ET_NODISCARD Error load_initial_state(
    const Program* program,
    const executorch_flatbuffer::Tensor* s_tensor,
    void* data,
    size_t nbytes,
    ValueLocation location);

ET_NODISCARD Result<::executorch::aten::Tensor> parse_tensor(
    const Program* program,
    MemoryManager* memory_manager,
    const executorch_flatbuffer::Tensor* s_tensor,
    ValueLocation location);

} // namespace internal
} // namespace runtime
} // namespace executorch
