#pragma once

// Builds a method's EValue table from ExecutionPlan.values. Lists refer to
// other values by index; every index is checked, and must refer to an
// earlier value of the right kind (the emitter always writes elements before
// the lists that hold them).

#include <cstddef>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/tensor_parser.h>

namespace executorch_flatbuffer {
struct ExecutionPlan;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

class Program;

namespace internal {

// Fills `values` (room for every value of `plan`, already default-constructed
// as None) in order; external tensors come from `external`.
ET_NODISCARD Error
parse_values(const Program* program,
             MemoryManager* memory_manager,
             const executorch_flatbuffer::ExecutionPlan* plan,
             EValue* values,
             size_t num_values,
             ExternalData* external);

} // namespace internal
} // namespace runtime
} // namespace executorch
