#pragma once

// DemoProgram: a parsed BackendWithCompilerDemo blob (layout in
// exir/backend/test/backend_with_compiler_demo.py and README.md) and the
// interpreter that runs it. Everything lives in memory from the caller's
// allocator; the blob can be freed once parse() returns.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>

namespace executorch {
namespace backends {
namespace demo {

// The demo's operators (the blob's opcodes).
enum class DemoOpcode : uint32_t { kSin = 0, kAdd = 1, kMm = 2 };

// Tensors have at most this many dimensions.
inline constexpr uint32_t kMaxDims = 8;

// A float32 tensor of the program: a constant, a delegate input or output,
// or an intermediate (planned storage).
struct DemoValue {
  uint32_t ndim;
  int64_t sizes[kMaxDims];
  size_t numel;
  float* data; // Constant or intermediate storage; inputs/outputs: null.
  bool is_constant;
  bool is_input;
};

struct DemoInstruction {
  DemoOpcode opcode;
  uint32_t output;
  uint32_t num_args;
  uint32_t args[2];
  int32_t debug_handle;
};

class DemoProgram final {
 public:
  // Parses and checks `blob` (every index, count and shape), copying
  // constants and allocating intermediates from `allocator`.
  static runtime::Result<DemoProgram*> parse(
      const void* blob, size_t size, runtime::MemoryAllocator* allocator);

  // Runs the instructions. `args` are the delegate call's values: the
  // inputs, then the outputs, as float32 tensors of the declared shapes.
  runtime::Error execute(runtime::Span<runtime::EValue*> args) const;

  uint32_t num_outputs() const {
    return num_outputs_;
  }

  uint32_t num_instructions() const {
    return num_instructions_;
  }

 private:
  DemoValue* values_ = nullptr;
  uint32_t num_values_ = 0;
  const uint32_t* inputs_ = nullptr;
  uint32_t num_inputs_ = 0;
  const uint32_t* outputs_ = nullptr;
  uint32_t num_outputs_ = 0;
  DemoInstruction* instructions_ = nullptr;
  uint32_t num_instructions_ = 0;
  // Where each value's data is during execute(): constants and
  // intermediates point at their own memory, inputs and outputs at the
  // call's tensors. Rebound by every execute().
  float** storage_ = nullptr;

  runtime::Error bind(runtime::Span<runtime::EValue*> args) const;
};

} // namespace demo
} // namespace backends
} // namespace executorch
