#pragma once

// Method: one loaded, executable entry point of a Program. It owns nothing:
// its values, tensors and kernel table live in the MemoryManager's
// allocators.
//
// Threading contract: a Method is used by one thread at a time (it has no
// locks: set_input, execute and get_output mutate its state). Several
// Methods of one shared Program, even of the same method name, may run
// concurrently on different threads when each has its own MemoryManager;
// see program.h.

#include <cstddef>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/named_data_map.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method_meta.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace executorch_flatbuffer {
struct ExecutionPlan;
} // namespace executorch_flatbuffer

namespace executorch {
namespace runtime {

class Program;
class EventTracer;
class BackendDelegate;
struct Chain;

class Method final {
 public:
  Method(Method&& other) noexcept;
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
  Method& operator=(Method&&) = delete;
  ~Method();

  // Copies `input` into input `input_idx`. A tensor input must match the
  // declared dtype and rank; its sizes must equal the declared ones (or lie
  // within their bounds for a dynamic input). The data is copied into the
  // planned buffer, or, for an unplanned input, the pointer is borrowed.
  ET_NODISCARD Error set_input(const EValue& input, size_t input_idx);
  ET_NODISCARD Error set_inputs(const ArrayRef<EValue>& inputs);

  // Points an unplanned output tensor at caller memory of `size` bytes.
  ET_NODISCARD Error set_output_data_ptr(void* buffer,
                                         size_t size,
                                         size_t output_idx);

  // Runs every instruction from the start. On failure the error names the
  // failing instruction (logged) and the method may be executed again.
  ET_NODISCARD Error execute();

  // A budget for programs that may loop forever (a while_loop's jumps): one
  // execute() runs at most `max_instructions` instructions, then fails with
  // InvalidState and a log line naming the instruction and the last jump
  // back. 0 (the default) means no limit. Programs from an untrusted source
  // should get kMaxInstructionsForUntrustedPrograms: far more than any
  // program without loops has (MobileNetV2 runs about 100 instructions),
  // and a second or less of the cheapest instructions.
  static constexpr size_t kMaxInstructionsForUntrustedPrograms = 1000000;
  void set_max_instructions(size_t max_instructions) {
    max_instructions_ = max_instructions;
  }
  size_t max_instructions() const {
    return max_instructions_;
  }

  // Runs one instruction; EndOfMethod after the last one.
  ET_NODISCARD Error step();
  // Index, within its chain, of the instruction step() runs next (or is
  // running now); fault handlers report it (examples/arm/cortex_m/fault.cpp).
  size_t current_instruction_index() const {
    return step_state_instruction_;
  }
  ET_NODISCARD Error reset_execution();

  // State: buffers the method mutates (a KV cache, a counter) live in
  // planned memory, start at the initial value the program stores for them
  // (copied in when the method loads) and keep what each execute() leaves
  // there, as module buffers do in eager. This copies the stored initial
  // values in again. Buffers stored without one (upstream exports them so
  // unless marked initialized) keep their contents.
  ET_NODISCARD Error reset_mutable_buffers();

  // Copies the output EValues (tensors refer to the method's memory).
  ET_NODISCARD Error get_outputs(EValue* output_evalues, size_t length);
  ET_NODISCARD Error get_inputs(EValue* input_evalues, size_t length);

  size_t inputs_size() const;
  size_t outputs_size() const;
  const EValue& get_input(size_t i) const;
  EValue& mutable_input(size_t i);
  const EValue& get_output(size_t i) const;
  EValue& mutable_output(size_t i);

  MethodMeta method_meta() const;

  size_t values_size() const {
    return n_value_;
  }
  const EValue& get_value(size_t i) const;

 private:
  friend class Program;

  Method(const Program* program,
         MemoryManager* memory_manager,
         EventTracer* event_tracer,
         MemoryAllocator* temp_allocator,
         const NamedDataMap* external_data_map);

  // Parses values, resolves kernels and initializes delegates for `plan`.
  ET_NODISCARD Error init(const executorch_flatbuffer::ExecutionPlan* plan);
  ET_NODISCARD Error check_planned_memory() const;
  ET_NODISCARD Error parse_values();
  ET_NODISCARD Error check_io_indices() const;
  // Fails when a tensor other than an input or output has no memory.
  ET_NODISCARD Error check_tensor_storage();
  ET_NODISCARD Error init_delegates();
  ET_NODISCARD Error init_chains();
  ET_NODISCARD Error init_instruction(size_t chain_index,
                                      size_t instruction_index);
  // Rejects a JumpFalseCall that jumps back over nothing but frees and
  // jumps (`changed_before`: one past the last other instruction before
  // it, 0 for none).
  ET_NODISCARD Error check_loop_progress(size_t chain_index,
                                         size_t instruction_index,
                                         size_t changed_before) const;
  ET_NODISCARD Error resolve_kernel(size_t chain_index,
                                    size_t instruction_index);
  // One flag per value, all false, from the method allocator: scratch for
  // the load-time analyses below, which last as long as the method.
  ET_NODISCARD Result<bool*> allocate_value_flags();
  // Runs the load-time check of each KernelCall's operator that has one
  // (OperatorSchema::check_fixed_args) on the values the program fixes.
  ET_NODISCARD Error check_fixed_args();
  // Refuses a KernelCall that writes (OperatorSchema::written_args) a value
  // that holds a constant tensor, or may after a move: constants can be a
  // read-only mapping of the file, and every method shares them.
  ET_NODISCARD Error check_constants_not_written();
  // Fails when a tensor input or output still has no data to run with.
  ET_NODISCARD Error check_io_ready() const;
  ET_NODISCARD Error execute_instruction();
  // Logs where execute() ran out of its instruction budget.
  void report_exhausted_budget() const;
  ET_NODISCARD Error execute_kernel_call(size_t instruction_index);
  ET_NODISCARD Error execute_delegate_call(size_t instruction_index);
  // The value of a JumpFalseCall's condition.
  ET_NODISCARD Result<bool> jump_condition(size_t instruction_index) const;
  ET_NODISCARD Error set_tensor_input(const EValue& input, size_t input_idx);
  // Each size of a DYNAMIC_BOUND input within the bound the program plans.
  ET_NODISCARD Error check_input_bounds(const executorch::aten::Tensor& source,
                                        size_t input_idx) const;
  size_t get_input_index(size_t i) const;
  size_t get_output_index(size_t i) const;
  // True when value `value_index` is a tensor placed in planned memory.
  bool is_planned_tensor(size_t value_index) const;
  const char* method_name() const;

  const Program* program_;
  MemoryManager* memory_manager_;
  MemoryAllocator* temp_allocator_;
  EventTracer* event_tracer_;
  // Data outside the .pte (load_method's named_data_map), or null.
  const NamedDataMap* external_data_map_;
  const executorch_flatbuffer::ExecutionPlan* serialization_plan_ = nullptr;

  size_t n_value_ = 0;
  EValue* values_ = nullptr;

  size_t n_delegate_ = 0;
  BackendDelegate* delegates_ = nullptr;

  // Data of the tensors stored in external_data_map_, kept loaded.
  size_t n_external_constants_ = 0;
  FreeableBuffer* external_constants_ = nullptr;

  size_t n_chains_ = 0;
  Chain* chains_ = nullptr;

  // Program counter: current chain and instruction within it.
  size_t step_state_chain_ = 0;
  size_t step_state_instruction_ = 0;

  size_t max_instructions_ = 0;
  // The last backward jump taken (chain, from, to), for the budget's report.
  bool jumped_back_ = false;
  size_t jump_back_chain_ = 0;
  size_t jump_back_from_ = 0;
  size_t jump_back_to_ = 0;

  bool initialized_ = false;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::Method;
} // namespace executor
} // namespace torch
