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

ET_NODISCARD Result<::executorch::aten::Tensor> parse_tensor(
    const Program* program,
    MemoryManager* memory_manager,
    const executorch_flatbuffer::Tensor* s_tensor,
    ValueLocation location);

} // namespace internal
} // namespace runtime
} // namespace executorch
