#pragma once

// Turns a serialized Tensor into a runtime Tensor whose metadata lives in the
// method allocator and whose data points at a constant, at planned memory, at
// data in an external file (a .ptd), or (for inputs and outputs the caller
// provides) nowhere yet.

#include <cstddef>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/memory_manager.h>

namespace executorch_flatbuffer {
struct ExecutionPlan;
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
// Tensors whose data is EXTERNAL: found by their fully qualified name in
// `map` (null when load_method got no data map). A constant's bytes are
// loaded into `buffers[count++]` (room for `capacity`), which the Method
// owns and frees; a planned tensor's initial value is copied into its
// planned memory.
struct ExternalData {
  const NamedDataMap* map = nullptr;
  FreeableBuffer* buffers = nullptr;
  size_t capacity = 0;
  size_t count = 0;
};

// How many of `plan`'s tensors are external constants (one buffer each).
size_t count_external_constants(
    const executorch_flatbuffer::ExecutionPlan* plan);

ET_NODISCARD Result<::executorch::aten::Tensor> parse_tensor(
    const Program* program,
    MemoryManager* memory_manager,
    const executorch_flatbuffer::Tensor* s_tensor,
    ValueLocation location,
    ExternalData* external);

} // namespace internal
} // namespace runtime
} // namespace executorch
