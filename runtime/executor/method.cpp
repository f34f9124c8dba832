#include <executorch/runtime/executor/method.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/event_tracer_hooks.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/executor/backend_delegate.h>
#include <executorch/runtime/executor/merged_data_map.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/executor/schema_util.h>
#include <executorch/runtime/executor/tensor_parser.h>
#include <executorch/runtime/executor/value_parser.h>
#include <executorch/runtime/kernel/operator_schema.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {

using ::executorch::aten::Tensor;
using executorch_flatbuffer::InstructionArguments;
using internal::index_in_range;

// One instruction with its operands resolved at load time.
struct LoadedInstruction {
  EValue** args;
  size_t num_args;
  // The kernel of a KernelCall; null for other instructions.
  OpFunction kernel;
  // A KernelCall's registered schema, if any.
  const OperatorSchema* schema;
};

struct Chain {
  const executorch_flatbuffer::Chain* s_chain;
  LoadedInstruction* instructions;
  size_t num_instructions;
};

namespace {

// Longest "namespace::name.overload" accepted.
constexpr size_t kMaxOperatorNameLength = 256;
// Tensor arguments described in a kernel lookup key; calls with more use the
// operator's fallback kernel.
constexpr size_t kMaxKernelKeyTensors = 64;

// Checks a KernelCall's arguments against its operator's registered schema
// (operators without one, like the prim ops, check their own): one value
// per schema argument, each of its kind, and at most one more (the result
// the emitter passes after an out variant's out arguments).
Error check_kernel_args(const char* method_name,
                        size_t instruction_index,
                        const char* op_name,
                        const LoadedInstruction& loaded) {
  const OperatorSchema* schema = loaded.schema;
  if (schema == nullptr) {
    return Error::Ok;
  }
  const size_t expected = schema->args.size();
  ET_CHECK_OR_RETURN_ERROR(
      loaded.num_args >= expected && loaded.num_args <= expected + 1,
      InvalidProgram,
      "Method '%s' instruction %zu: operator '%s' takes %zu arguments (and "
      "optionally its result), the call passes %zu",
      method_name,
      instruction_index,
      op_name,
      expected,
      loaded.num_args);
  for (size_t a = 0; a < expected; ++a) {
    ET_CHECK_OR_RETURN_ERROR(
        evalue_matches(*loaded.args[a], schema->args[a]),
        InvalidProgram,
        "Method '%s' instruction %zu: operator '%s' argument %zu must be %s, "
        "the call passes %s",
        method_name,
        instruction_index,
        op_name,
        a,
        arg_kind_name(schema->args[a]),
        tag_to_string(loaded.args[a]->tag));
  }
  return Error::Ok;
}

using SerializedValues =
    flatbuffers::Vector<flatbuffers::Offset<executorch_flatbuffer::EValue>>;

// True if values[v] is a tensor whose data came from the program or its data
// file at load (no planned memory, data already there): a constant.
bool is_constant_tensor(const EValue* values,
                        const SerializedValues* s_values,
                        size_t v) {
  const auto* s_tensor = s_values->Get(v)->val_as_Tensor();
  return s_tensor != nullptr && s_tensor->allocation_info() == nullptr &&
         values[v].isTensor() &&
         values[v].toTensor().const_data_ptr() != nullptr;
}

size_t vector_size(const flatbuffers::Vector<int32_t>* v) {
  return v == nullptr ? 0 : v->size();
}

// "name.overload", or "name" when the overload is empty. Null when the
// operator has no name or the result does not fit.
const char* operator_name(const executorch_flatbuffer::Operator* op,
                          char* buffer,
                          size_t size) {
  if (op->name() == nullptr) {
    return nullptr;
  }
  const char* overload =
      op->overload() == nullptr ? "" : op->overload()->c_str();
  const int written =
      overload[0] == '\0'
          ? std::snprintf(buffer, size, "%s", op->name()->c_str())
          : std::snprintf(buffer, size, "%s.%s", op->name()->c_str(), overload);
  return written < 0 || static_cast<size_t>(written) >= size ? nullptr : buffer;
}

// The profiling event name of a kernel call: "native_call_<name>.<overload>"
// without the namespace, as upstream's runtime names it.
const char* kernel_event_name(const executorch_flatbuffer::Operator* op,
                              char* buffer,
                              size_t size) {
  const char* name = op->name() == nullptr ? "" : op->name()->c_str();
  const char* separator = std::strstr(name, "::");
  const char* overload =
      op->overload() == nullptr ? "" : op->overload()->c_str();
  std::snprintf(buffer,
                size,
                "native_call_%s%s%s",
                separator == nullptr ? name : separator + 2,
                overload[0] == '\0' ? "" : ".",
                overload);
  return buffer;
}

// Adds the dtype and dim order of `tensor` to a kernel lookup key.
bool add_tensor_meta(const Tensor& tensor, TensorMeta* metas, size_t* count) {
  if (*count >= kMaxKernelKeyTensors) {
    return false;
  }
  metas[(*count)++] =
      TensorMeta(tensor.scalar_type(),
                 Span<const ::executorch::aten::DimOrderType>(
                     tensor.dim_order().data(), tensor.dim_order().size()));
  return true;
}

} // namespace

Method::Method(const Program* program,
               MemoryManager* memory_manager,
               EventTracer* event_tracer,
               MemoryAllocator* temp_allocator,
               const NamedDataMap* external_data_map)
    : program_(program),
      memory_manager_(memory_manager),
      temp_allocator_(temp_allocator),
      event_tracer_(event_tracer),
      external_data_map_(external_data_map) {}

Method::Method(Method&& other) noexcept
    : program_(other.program_),
      memory_manager_(other.memory_manager_),
      temp_allocator_(other.temp_allocator_),
      event_tracer_(other.event_tracer_),
      external_data_map_(other.external_data_map_),
      serialization_plan_(other.serialization_plan_),
      n_value_(other.n_value_),
      values_(other.values_),
      n_delegate_(other.n_delegate_),
      delegates_(other.delegates_),
      n_external_constants_(other.n_external_constants_),
      external_constants_(other.external_constants_),
      n_chains_(other.n_chains_),
      chains_(other.chains_),
      step_state_chain_(other.step_state_chain_),
      step_state_instruction_(other.step_state_instruction_),
      max_instructions_(other.max_instructions_),
      initialized_(other.initialized_) {
  // The moved-from method no longer owns the delegates.
  other.n_delegate_ = 0;
  other.delegates_ = nullptr;
  other.n_external_constants_ = 0;
  other.external_constants_ = nullptr;
  other.initialized_ = false;
}

Method::~Method() {
  for (size_t i = 0; i < n_delegate_; ++i) {
    delegates_[i].~BackendDelegate();
  }
  for (size_t i = 0; i < n_external_constants_; ++i) {
    external_constants_[i].~FreeableBuffer();
  }
}

const char* Method::method_name() const {
  return serialization_plan_ == nullptr ||
                 serialization_plan_->name() == nullptr
             ? ""
             : serialization_plan_->name()->c_str();
}

// ---------------------------------------------------------------------------
// Loading

Error Method::init(const executorch_flatbuffer::ExecutionPlan* plan) {
  internal::EventTracerProfileMethodScope scope(event_tracer_, "Method::init");
  serialization_plan_ = plan;
  ET_CHECK_OK_OR_RETURN_ERROR(check_planned_memory());
  ET_CHECK_OK_OR_RETURN_ERROR(parse_values());
  ET_CHECK_OK_OR_RETURN_ERROR(check_io_indices());
  ET_CHECK_OK_OR_RETURN_ERROR(check_tensor_storage());
  ET_CHECK_OK_OR_RETURN_ERROR(init_delegates());
  ET_CHECK_OK_OR_RETURN_ERROR(init_chains());
  ET_CHECK_OK_OR_RETURN_ERROR(check_fixed_args());
  ET_CHECK_OK_OR_RETURN_ERROR(check_constants_not_written());
  initialized_ = true;
  return Error::Ok;
}

Error Method::check_planned_memory() const {
  const MethodMeta meta(serialization_plan_);
  const size_t expected = meta.num_memory_planned_buffers();
  HierarchicalAllocator* planned = memory_manager_->planned_memory();
  const size_t provided = planned == nullptr ? 0 : planned->num_buffers();
  ET_CHECK_OR_RETURN_ERROR(provided == expected,
                           InvalidArgument,
                           "Method '%s' needs %zu planned memory buffers "
                           "(MethodMeta::num_memory_planned_buffers), but the "
                           "MemoryManager provides %zu",
                           method_name(),
                           expected,
                           provided);
  for (size_t i = 0; i < expected; ++i) {
    const int64_t size = *meta.memory_planned_buffer_size(i);
    ET_CHECK_OR_RETURN_ERROR(size >= 0,
                             InvalidProgram,
                             "Method '%s': planned buffer %zu has negative "
                             "size %lld",
                             method_name(),
                             i,
                             static_cast<long long>(size));
    ET_CHECK_OR_RETURN_ERROR(
        planned->get_offset_address(i, 0, static_cast<size_t>(size)).ok(),
        InvalidArgument,
        "Method '%s': planned buffer %zu is smaller than the %lld bytes "
        "memory planning requires",
        method_name(),
        i,
        static_cast<long long>(size));
  }
  return Error::Ok;
}

Error Method::parse_values() {
  const auto* s_values = serialization_plan_->values();
  const size_t count = s_values == nullptr ? 0 : s_values->size();
  if (count == 0) {
    return Error::Ok;
  }
  values_ = memory_manager_->method_allocator()->allocateList<EValue>(count);
  ET_CHECK_OR_RETURN_ERROR(values_ != nullptr,
                           MemoryAllocationFailed,
                           "Method '%s': method allocator out of memory for "
                           "%zu values",
                           method_name(),
                           count);
  for (size_t i = 0; i < count; ++i) {
    new (&values_[i]) EValue();
  }
  n_value_ = count;
  // External constants stay loaded as long as the Method.
  internal::ExternalData external;
  external.map = external_data_map_;
  external.capacity = internal::count_external_constants(serialization_plan_);
  if (external.capacity > 0) {
    external.buffers =
        memory_manager_->method_allocator()->allocateList<FreeableBuffer>(
            external.capacity);
    ET_CHECK_OR_RETURN_ERROR(external.buffers != nullptr,
                             MemoryAllocationFailed,
                             "Method '%s': method allocator out of memory for "
                             "%zu external constants",
                             method_name(),
                             external.capacity);
    for (size_t i = 0; i < external.capacity; ++i) {
      new (&external.buffers[i]) FreeableBuffer();
    }
    external_constants_ = external.buffers;
    n_external_constants_ = external.capacity;
  }
  return internal::parse_values(program_,
                                memory_manager_,
                                serialization_plan_,
                                values_,
                                n_value_,
                                &external);
}

Error Method::check_io_indices() const {
  const struct {
    const flatbuffers::Vector<int32_t>* indices;
    const char* kind;
  } lists[] = {{serialization_plan_->inputs(), "input"},
               {serialization_plan_->outputs(), "output"}};
  for (const auto& list : lists) {
    for (size_t i = 0; i < vector_size(list.indices); ++i) {
      const int32_t index = list.indices->Get(i);
      ET_CHECK_OR_RETURN_ERROR(index_in_range(index, n_value_),
                               InvalidProgram,
                               "Method '%s' %s %zu refers to value %d, out of "
                               "range: %zu values",
                               method_name(),
                               list.kind,
                               i,
                               index,
                               n_value_);
    }
  }
  return Error::Ok;
}

Error Method::check_tensor_storage() {
  // A kernel reads or writes a tensor's nbytes at its data pointer. Only
  // inputs and outputs get their memory from the caller (checked before
  // execute); any other tensor without constant or planned memory would be
  // a null pointer in a kernel. Inputs and outputs without data are marked
  // with a placeholder pointer for the duration of the scan, which keeps it
  // linear in the number of values.
  static uint8_t io_placeholder;
  auto mark_io = [&](void* from, void* to) {
    for (const auto* list :
         {serialization_plan_->inputs(), serialization_plan_->outputs()}) {
      for (size_t i = 0; i < vector_size(list); ++i) {
        EValue& value = values_[list->Get(i)];
        if (value.isTensor() && value.toTensor().const_data_ptr() == from) {
          value.toTensor().unsafeGetTensorImpl()->set_data(to);
        }
      }
    }
  };
  mark_io(nullptr, &io_placeholder);
  Error error = Error::Ok;
  for (size_t i = 0; i < n_value_ && error == Error::Ok; ++i) {
    if (values_[i].isTensor() && values_[i].toTensor().nbytes() > 0 &&
        values_[i].toTensor().const_data_ptr() == nullptr) {
      ET_LOG(Error,
             "Method '%s' value %zu: tensor of %zu bytes has no storage (no "
             "allocation_info, no data_buffer_idx) and is not an input or "
             "output",
             method_name(),
             i,
             values_[i].toTensor().nbytes());
      error = Error::InvalidProgram;
    }
  }
  mark_io(&io_placeholder, nullptr);
  return error;
}

Error Method::init_delegates() {
  const auto* s_delegates = serialization_plan_->delegates();
  const size_t count = s_delegates == nullptr ? 0 : s_delegates->size();
  if (count == 0) {
    return Error::Ok;
  }
  MemoryAllocator* allocator = memory_manager_->method_allocator();
  delegates_ = allocator->allocateList<BackendDelegate>(count);
  ET_CHECK_OR_RETURN_ERROR(delegates_ != nullptr,
                           MemoryAllocationFailed,
                           "Method '%s': method allocator out of memory for "
                           "%zu delegates",
                           method_name(),
                           count);
  // Delegates find weights stored by key in the program or in the external
  // data; the merged view is only needed while they initialize.
  Result<const NamedDataMap*> program_data = program_->get_named_data_map();
  Result<MergedDataMap> named_data = MergedDataMap::load(
      program_data.ok() ? *program_data : nullptr, external_data_map_);
  if (!named_data.ok()) {
    ET_LOG(Error,
           "Method '%s': the external data repeats keys of the program",
           method_name());
    return named_data.error();
  }
  BackendInitContext context(
      allocator, event_tracer_, method_name(), &named_data.get());
  for (size_t i = 0; i < count; ++i) {
    const Error error = BackendDelegate::Init(
        s_delegates->Get(i), program_, context, i, &delegates_[i]);
    if (error != Error::Ok) {
      ET_LOG(Error,
             "Method '%s': failed to initialize delegate %zu",
             method_name(),
             i);
      return error;
    }
    // Counted only once constructed, so the destructor destroys exactly the
    // initialized delegates.
    n_delegate_ = i + 1;
  }
  return Error::Ok;
}

Error Method::init_chains() {
  const auto* s_chains = serialization_plan_->chains();
  const size_t count = s_chains == nullptr ? 0 : s_chains->size();
  if (count == 0) {
    return Error::Ok;
  }
  MemoryAllocator* allocator = memory_manager_->method_allocator();
  chains_ = allocator->allocateList<Chain>(count);
  ET_CHECK_OR_RETURN_ERROR(chains_ != nullptr,
                           MemoryAllocationFailed,
                           "Method '%s': method allocator out of memory for "
                           "%zu chains",
                           method_name(),
                           count);
  for (size_t c = 0; c < count; ++c) {
    const auto* s_chain = s_chains->Get(c);
    const size_t num_instructions = s_chain->instructions() == nullptr
                                        ? 0
                                        : s_chain->instructions()->size();
    LoadedInstruction* instructions = nullptr;
    if (num_instructions > 0) {
      instructions =
          allocator->allocateList<LoadedInstruction>(num_instructions);
      ET_CHECK_OR_RETURN_ERROR(instructions != nullptr,
                               MemoryAllocationFailed,
                               "Method '%s': method allocator out of memory "
                               "for %zu instructions",
                               method_name(),
                               num_instructions);
    }
    chains_[c] = Chain{s_chain, instructions, num_instructions};
    n_chains_ = c + 1;
    // One past the last instruction so far that may change a value.
    size_t changed_before = 0;
    for (size_t i = 0; i < num_instructions; ++i) {
      ET_CHECK_OK_OR_RETURN_ERROR(init_instruction(c, i));
      ET_CHECK_OK_OR_RETURN_ERROR(check_loop_progress(c, i, changed_before));
      const auto type = s_chain->instructions()->Get(i)->instr_args_type();
      if (type != InstructionArguments::JumpFalseCall &&
          type != InstructionArguments::FreeCall) {
        changed_before = i + 1;
      }
    }
  }
  return Error::Ok;
}

Result<bool*> Method::allocate_value_flags() {
  bool* flags =
      memory_manager_->method_allocator()->allocateList<bool>(n_value_);
  ET_CHECK_OR_RETURN_ERROR(flags != nullptr,
                           MemoryAllocationFailed,
                           "Method '%s': method allocator out of memory for "
                           "%zu flags",
                           method_name(),
                           n_value_);
  std::fill(flags, flags + n_value_, false);
  return flags;
}

Error Method::check_fixed_args() {
  bool any = false;
  for (size_t c = 0; c < n_chains_; ++c) {
    for (size_t i = 0; i < chains_[c].num_instructions; ++i) {
      const OperatorSchema* schema = chains_[c].instructions[i].schema;
      any = any || (schema != nullptr && schema->check_fixed_args != nullptr);
    }
  }
  if (!any) {
    return Error::Ok;
  }
  // Values something can write: the caller (inputs), moves, delegates (any
  // arg), and kernels: an operator without a schema any arg, one with a
  // schema the result after its arguments (what a scalar-returning
  // operator like sym_size writes). A tensor argument is fixed only if it
  // is a constant (no planned memory, data from the program).
  bool* written = nullptr;
  ET_UNWRAP(written, allocate_value_flags());
  const auto* inputs = serialization_plan_->inputs();
  for (size_t i = 0; i < vector_size(inputs); ++i) {
    written[inputs->Get(i)] = true;
  }
  for (size_t c = 0; c < n_chains_; ++c) {
    const Chain& chain = chains_[c];
    for (size_t i = 0; i < chain.num_instructions; ++i) {
      const auto* instruction = chain.s_chain->instructions()->Get(i);
      const LoadedInstruction& loaded = chain.instructions[i];
      if (instruction->instr_args_type() == InstructionArguments::MoveCall) {
        written[instruction->instr_args_as_MoveCall()->move_to()] = true;
        continue;
      }
      const size_t first_written =
          loaded.schema != nullptr && loaded.kernel != nullptr
              ? loaded.schema->args.size()
              : 0;
      for (size_t a = first_written; a < loaded.num_args; ++a) {
        written[loaded.args[a] - values_] = true;
      }
    }
  }
  const auto* s_values = serialization_plan_->values();
  constexpr size_t kMaxCheckedArgs = 32;
  bool fixed[kMaxCheckedArgs];
  for (size_t c = 0; c < n_chains_; ++c) {
    const Chain& chain = chains_[c];
    for (size_t i = 0; i < chain.num_instructions; ++i) {
      const LoadedInstruction& loaded = chain.instructions[i];
      if (loaded.schema == nullptr ||
          loaded.schema->check_fixed_args == nullptr ||
          loaded.num_args > kMaxCheckedArgs) {
        continue;
      }
      for (size_t a = 0; a < loaded.num_args; ++a) {
        const size_t v = static_cast<size_t>(loaded.args[a] - values_);
        const EValue& value = *loaded.args[a];
        if (value.isTensor()) {
          fixed[a] = !written[v] && is_constant_tensor(values_, s_values, v);
        } else {
          fixed[a] = !written[v] && (value.isInt() || value.isDouble() ||
                                     value.isBool() || value.isNone());
        }
      }
      ET_CHECK_OR_RETURN_ERROR(
          loaded.schema->check_fixed_args(
              Span<EValue* const>(loaded.args, loaded.num_args), fixed),
          InvalidProgram,
          "Method '%s' chain %zu instruction %zu: operator '%s' refuses "
          "the constant arguments the program gives it (the line above "
          "names which)",
          method_name(),
          c,
          i,
          loaded.schema->name);
    }
  }
  return Error::Ok;
}

Error Method::check_constants_not_written() {
  // Values that may hold a constant tensor: the constants, and the values
  // moves carry them to (a move copies the value, so its target then points
  // at the constant's data), to a fixed point.
  bool* constant = nullptr;
  ET_UNWRAP(constant, allocate_value_flags());
  const auto* s_values = serialization_plan_->values();
  for (size_t v = 0; v < n_value_; ++v) {
    constant[v] = is_constant_tensor(values_, s_values, v);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t c = 0; c < n_chains_; ++c) {
      const auto* instructions = chains_[c].s_chain->instructions();
      for (size_t i = 0; i < chains_[c].num_instructions; ++i) {
        const auto* move = instructions->Get(i)->instr_args_as_MoveCall();
        if (move != nullptr && constant[move->move_from()] &&
            !constant[move->move_to()]) {
          constant[move->move_to()] = changed = true;
        }
      }
    }
  }
  // A kernel writes the arguments its schema marks `!` and the result after
  // them; a delegate writes the trailing args its backend names as outputs.
  // A tensor list there writes its items.
  for (size_t c = 0; c < n_chains_; ++c) {
    const auto* instructions = chains_[c].s_chain->instructions();
    for (size_t i = 0; i < chains_[c].num_instructions; ++i) {
      const LoadedInstruction& loaded = chains_[c].instructions[i];
      const auto* delegate_call =
          instructions->Get(i)->instr_args_as_DelegateCall();
      const BackendDelegate* delegate =
          delegate_call == nullptr
              ? nullptr
              : &delegates_[delegate_call->delegate_index()];
      if (delegate == nullptr &&
          (loaded.schema == nullptr || loaded.kernel == nullptr)) {
        continue;
      }
      const size_t first_delegate_output =
          delegate == nullptr
              ? 0
              : loaded.num_args -
                    std::min(delegate->num_outputs(), loaded.num_args);
      for (size_t a = 0; a < loaded.num_args; ++a) {
        bool written = false;
        if (delegate != nullptr) {
          written = a >= first_delegate_output;
        } else {
          const size_t num_schema_args = loaded.schema->args.size();
          written = a >= num_schema_args ||
                    (a < 64 && ((loaded.schema->written_args >> a) & 1) != 0);
        }
        const size_t v = static_cast<size_t>(loaded.args[a] - values_);
        const auto* list = s_values->Get(v)->val_as_TensorList();
        const auto* items = list == nullptr ? nullptr : list->items();
        bool holds_constant = constant[v];
        for (size_t k = 0; items != nullptr && k < items->size(); ++k) {
          holds_constant = holds_constant || constant[items->Get(k)];
        }
        ET_CHECK_OR_RETURN_ERROR(
            !written || !holds_constant,
            InvalidProgram,
            "Method '%s' chain %zu instruction %zu: %s '%s' writes its "
            "argument %zu, value %zu, which holds a constant tensor "
            "(constants are read-only)",
            method_name(),
            c,
            i,
            delegate == nullptr ? "operator" : "delegate of backend",
            delegate == nullptr ? loaded.schema->name : delegate->id(),
            a,
            v);
      }
    }
  }
  return Error::Ok;
}

Error Method::check_loop_progress(size_t chain_index,
                                  size_t instruction_index,
                                  size_t changed_before) const {
  const auto* call = chains_[chain_index]
                         .s_chain->instructions()
                         ->Get(instruction_index)
                         ->instr_args_as_JumpFalseCall();
  if (call == nullptr) {
    return Error::Ok;
  }
  // A jump back over instructions that change no value (only frees and
  // jumps) runs the same instructions on the same values again: the loop
  // never ends. Loops through moves may cycle and exit; the instruction
  // budget bounds those.
  const size_t destination =
      static_cast<size_t>(call->destination_instruction());
  ET_CHECK_OR_RETURN_ERROR(
      destination > instruction_index || changed_before > destination,
      InvalidProgram,
      "Method '%s' instruction %zu: JumpFalseCall jumps back to instruction "
      "%zu, and no instruction in between changes a value: the loop cannot "
      "make progress",
      method_name(),
      instruction_index,
      destination);
  return Error::Ok;
}

Error Method::init_instruction(size_t chain_index, size_t instruction_index) {
  Chain& chain = chains_[chain_index];
  LoadedInstruction& loaded = chain.instructions[instruction_index];
  loaded = LoadedInstruction{nullptr, 0, nullptr, nullptr};
  const auto* instruction =
      chain.s_chain->instructions()->Get(instruction_index);
  const InstructionArguments type = instruction->instr_args_type();
  ET_CHECK_OR_RETURN_ERROR(
      instruction->instr_args() != nullptr,
      InvalidProgram,
      "Method '%s' instruction %zu: missing or unknown instruction type %d",
      method_name(),
      instruction_index,
      static_cast<int>(type));

  // Operands every kind of instruction refers to, checked against the
  // value table; arg lists are converted to EValue pointers.
  auto check_value = [&](int32_t index, const char* field) -> Error {
    ET_CHECK_OR_RETURN_ERROR(index_in_range(index, n_value_),
                             InvalidProgram,
                             "Method '%s' instruction %zu: %s refers to value "
                             "%d, out of range: %zu values",
                             method_name(),
                             instruction_index,
                             field,
                             index,
                             n_value_);
    return Error::Ok;
  };
  auto load_args = [&](const flatbuffers::Vector<int32_t>* args) -> Error {
    const size_t count = vector_size(args);
    if (count == 0) {
      return Error::Ok;
    }
    loaded.args =
        memory_manager_->method_allocator()->allocateList<EValue*>(count);
    ET_CHECK_OR_RETURN_ERROR(loaded.args != nullptr,
                             MemoryAllocationFailed,
                             "Method '%s' instruction %zu: method allocator "
                             "out of memory for %zu arguments",
                             method_name(),
                             instruction_index,
                             count);
    for (size_t a = 0; a < count; ++a) {
      ET_CHECK_OK_OR_RETURN_ERROR(check_value(args->Get(a), "argument"));
      loaded.args[a] = &values_[args->Get(a)];
    }
    loaded.num_args = count;
    return Error::Ok;
  };

  switch (type) {
    case InstructionArguments::KernelCall: {
      const auto* call = instruction->instr_args_as_KernelCall();
      ET_CHECK_OK_OR_RETURN_ERROR(load_args(call->args()));
      return resolve_kernel(chain_index, instruction_index);
    }
    case InstructionArguments::DelegateCall: {
      const auto* call = instruction->instr_args_as_DelegateCall();
      ET_CHECK_OR_RETURN_ERROR(
          index_in_range(call->delegate_index(), n_delegate_),
          InvalidProgram,
          "Method '%s' instruction %zu: delegate_index %d out of range: %zu "
          "delegates",
          method_name(),
          instruction_index,
          call->delegate_index(),
          n_delegate_);
      return load_args(call->args());
    }
    case InstructionArguments::MoveCall: {
      const auto* call = instruction->instr_args_as_MoveCall();
      ET_CHECK_OK_OR_RETURN_ERROR(check_value(call->move_from(), "move_from"));
      ET_CHECK_OK_OR_RETURN_ERROR(check_value(call->move_to(), "move_to"));
      // Values keep the types they were checked with against each kernel's
      // schema.
      const Tag from = values_[call->move_from()].tag;
      const Tag to = values_[call->move_to()].tag;
      ET_CHECK_OR_RETURN_ERROR(from == to,
                               InvalidProgram,
                               "Method '%s' instruction %zu: moves a %s "
                               "(value %d) into a %s (value %d)",
                               method_name(),
                               instruction_index,
                               tag_to_string(from),
                               call->move_from(),
                               tag_to_string(to),
                               call->move_to());
      return Error::Ok;
    }
    case InstructionArguments::JumpFalseCall: {
      const auto* call = instruction->instr_args_as_JumpFalseCall();
      ET_CHECK_OK_OR_RETURN_ERROR(
          check_value(call->cond_value_index(), "cond_value_index"));
      // Jumping to one past the last instruction ends the chain.
      ET_CHECK_OR_RETURN_ERROR(
          index_in_range(call->destination_instruction(),
                         chain.num_instructions + 1),
          InvalidProgram,
          "Method '%s' instruction %zu: jump destination %d out of range: "
          "chain has %zu instructions",
          method_name(),
          instruction_index,
          call->destination_instruction(),
          chain.num_instructions);
      return Error::Ok;
    }
    case InstructionArguments::FreeCall: {
      const auto* call = instruction->instr_args_as_FreeCall();
      return check_value(call->value_index(), "value_index");
    }
    default:
      break;
  }
  ET_LOG(Error,
         "Method '%s' instruction %zu: unknown instruction type %d",
         method_name(),
         instruction_index,
         static_cast<int>(type));
  return Error::InvalidProgram;
}

Error Method::resolve_kernel(size_t chain_index, size_t instruction_index) {
  LoadedInstruction& loaded =
      chains_[chain_index].instructions[instruction_index];
  const auto* call = chains_[chain_index]
                         .s_chain->instructions()
                         ->Get(instruction_index)
                         ->instr_args_as_KernelCall();
  const auto* operators = serialization_plan_->operators();
  const size_t num_operators = operators == nullptr ? 0 : operators->size();
  ET_CHECK_OR_RETURN_ERROR(index_in_range(call->op_index(), num_operators),
                           InvalidProgram,
                           "Method '%s' instruction %zu: op_index %d out of "
                           "range: %zu operators",
                           method_name(),
                           instruction_index,
                           call->op_index(),
                           num_operators);
  char name_buffer[kMaxOperatorNameLength];
  const char* name = operator_name(
      operators->Get(call->op_index()), name_buffer, sizeof(name_buffer));
  ET_CHECK_OR_RETURN_ERROR(name != nullptr,
                           InvalidProgram,
                           "Method '%s' instruction %zu: operator %d has no "
                           "name or a name longer than %zu characters",
                           method_name(),
                           instruction_index,
                           call->op_index(),
                           kMaxOperatorNameLength - 1);

  // Describe the tensor arguments so dtype-specialized kernels can be
  // chosen; too many to describe means only the fallback kernel matches.
  TensorMeta metas[kMaxKernelKeyTensors];
  size_t num_metas = 0;
  bool described = true;
  for (size_t a = 0; a < loaded.num_args && described; ++a) {
    const EValue& arg = *loaded.args[a];
    if (arg.isTensor()) {
      described = add_tensor_meta(arg.toTensor(), metas, &num_metas);
    } else if (arg.isTensorList()) {
      for (const Tensor& tensor : arg.toTensorList()) {
        described = described && add_tensor_meta(tensor, metas, &num_metas);
      }
    }
  }
  Result<OpFunction> kernel = get_op_function_from_registry(
      name, Span<const TensorMeta>(metas, described ? num_metas : 0));
  if (!kernel.ok()) {
    // Tell an operator missing from the build from one whose kernels only
    // cover other dtypes or dim orders.
    bool name_known = false;
    for (const Kernel& registered : get_registered_kernels()) {
      name_known = name_known || std::strcmp(registered.name_, name) == 0;
    }
    if (name_known) {
      ET_LOG(Error,
             "Method '%s' instruction %zu: operator '%s' has kernels, but "
             "none for these argument dtypes and dim orders (in a selective "
             "build, add them to its et_kernel_metadata).",
             method_name(),
             instruction_index,
             name);
    } else {
      // Two lines: a log line holds 256 characters.
      ET_LOG(Error,
             "Method '%s' instruction %zu: operator '%s' has no registered "
             "kernel; link a kernel library that has it.",
             method_name(),
             instruction_index,
             name);
      ET_LOG(Error,
             "To include '%s' in a selective build, add it to "
             "EXECUTORCH_SELECT_OPS_LIST or EXECUTORCH_SELECT_OPS_YAML, or "
             "set EXECUTORCH_SELECT_OPS_MODEL to this .pte.",
             name);
    }
    return Error::OperatorMissing;
  }
  loaded.kernel = *kernel;
  loaded.schema = get_operator_schema(name);
  return check_kernel_args(method_name(), instruction_index, name, loaded);
}

// ---------------------------------------------------------------------------
// Inputs and outputs

size_t Method::inputs_size() const {
  return serialization_plan_ == nullptr
             ? 0
             : vector_size(serialization_plan_->inputs());
}

size_t Method::outputs_size() const {
  return serialization_plan_ == nullptr
             ? 0
             : vector_size(serialization_plan_->outputs());
}

size_t Method::get_input_index(size_t i) const {
  ET_CHECK_MSG(i < inputs_size(),
               "Input %zu out of range: %zu inputs",
               i,
               inputs_size());
  return static_cast<size_t>(serialization_plan_->inputs()->Get(i));
}

size_t Method::get_output_index(size_t i) const {
  ET_CHECK_MSG(i < outputs_size(),
               "Output %zu out of range: %zu outputs",
               i,
               outputs_size());
  return static_cast<size_t>(serialization_plan_->outputs()->Get(i));
}

const EValue& Method::get_input(size_t i) const {
  return values_[get_input_index(i)];
}

EValue& Method::mutable_input(size_t i) {
  return values_[get_input_index(i)];
}

const EValue& Method::get_output(size_t i) const {
  return values_[get_output_index(i)];
}

EValue& Method::mutable_output(size_t i) {
  return values_[get_output_index(i)];
}

const EValue& Method::get_value(size_t i) const {
  ET_CHECK_MSG(i < n_value_, "Value %zu out of range: %zu values", i, n_value_);
  return values_[i];
}

MethodMeta Method::method_meta() const {
  return MethodMeta(serialization_plan_);
}

bool Method::is_planned_tensor(size_t value_index) const {
  const auto* tensor =
      serialization_plan_->values()->Get(value_index)->val_as_Tensor();
  return tensor != nullptr && tensor->allocation_info() != nullptr;
}

Error Method::set_input(const EValue& input, size_t input_idx) {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_, InvalidState, "set_input on a method that is not loaded");
  ET_CHECK_OR_RETURN_ERROR(input_idx < inputs_size(),
                           InvalidArgument,
                           "Method '%s': input index %zu out of range: the "
                           "method takes %zu inputs",
                           method_name(),
                           input_idx,
                           inputs_size());
  EValue& target = mutable_input(input_idx);
  ET_CHECK_OR_RETURN_ERROR(input.tag == target.tag,
                           InvalidArgument,
                           "Method '%s' input %zu: expected %s, got %s",
                           method_name(),
                           input_idx,
                           tag_to_string(target.tag),
                           tag_to_string(input.tag));
  switch (target.tag) {
    case Tag::Tensor:
      return set_tensor_input(input, input_idx);
    case Tag::Int:
    case Tag::Double:
    case Tag::Bool:
    case Tag::None:
      target = input;
      return Error::Ok;
    default:
      ET_LOG(Error,
             "Method '%s' input %zu: setting a %s input is not supported",
             method_name(),
             input_idx,
             tag_to_string(target.tag));
      return Error::NotSupported;
  }
}

Error Method::set_tensor_input(const EValue& input, size_t input_idx) {
  const Tensor& source = input.toTensor();
  Tensor& target = mutable_input(input_idx).toTensor();
  ET_CHECK_OR_RETURN_ERROR(source.scalar_type() == target.scalar_type(),
                           InvalidArgument,
                           "Method '%s' input %zu: expected dtype %s (%d), "
                           "got %s (%d)",
                           method_name(),
                           input_idx,
                           toString(target.scalar_type()),
                           static_cast<int>(target.scalar_type()),
                           toString(source.scalar_type()),
                           static_cast<int>(source.scalar_type()));
  ET_CHECK_OR_RETURN_ERROR(source.dim() == target.dim(),
                           InvalidArgument,
                           "Method '%s' input %zu: expected rank %zd, got "
                           "rank %zd",
                           method_name(),
                           input_idx,
                           target.dim(),
                           source.dim());
  for (ssize_t d = 0; d < target.dim(); ++d) {
    ET_CHECK_OR_RETURN_ERROR(
        source.dim_order()[d] == target.dim_order()[d],
        InvalidArgument,
        "Method '%s' input %zu: dim_order differs at position %zd (expected "
        "%d, got %d)",
        method_name(),
        input_idx,
        d,
        static_cast<int>(target.dim_order()[d]),
        static_cast<int>(source.dim_order()[d]));
    ET_CHECK_OR_RETURN_ERROR(
        target.shape_dynamism() != TensorShapeDynamism::STATIC ||
            source.size(d) == target.size(d),
        InvalidArgument,
        "Method '%s' input %zu: static shape mismatch at dim %zd: expected "
        "size %zd, got %zd",
        method_name(),
        input_idx,
        d,
        target.size(d),
        source.size(d));
  }
  ET_CHECK_OK_OR_RETURN_ERROR(check_input_bounds(source, input_idx));
  const Error resized =
      target.unsafeGetTensorImpl()->internal_resize_contiguous(source.sizes());
  ET_CHECK_OR_RETURN_ERROR(resized == Error::Ok,
                           InvalidArgument,
                           "Method '%s' input %zu: sizes do not fit the "
                           "input's upper bound of %zd elements",
                           method_name(),
                           input_idx,
                           target.unsafeGetTensorImpl()->capacity_numel());

  if (!is_planned_tensor(get_input_index(input_idx))) {
    // Unplanned input: borrow the caller's buffer.
    target.set_data(source.mutable_data_ptr());
    return Error::Ok;
  }
  if (source.nbytes() == 0 ||
      source.const_data_ptr() == target.const_data_ptr()) {
    return Error::Ok;
  }
  ET_CHECK_OR_RETURN_ERROR(source.const_data_ptr() != nullptr,
                           InvalidArgument,
                           "Method '%s' input %zu: tensor has no data",
                           method_name(),
                           input_idx);
  std::memcpy(
      target.mutable_data_ptr(), source.const_data_ptr(), source.nbytes());
  return Error::Ok;
}

Error Method::check_input_bounds(const Tensor& source, size_t input_idx) const {
  // The program stores a bounded tensor's sizes at their upper bounds.
  const auto* planned = serialization_plan_->values()
                            ->Get(get_input_index(input_idx))
                            ->val_as_Tensor();
  const Tensor& target = get_input(input_idx).toTensor();
  if (target.shape_dynamism() != TensorShapeDynamism::DYNAMIC_BOUND ||
      planned == nullptr || planned->sizes() == nullptr) {
    return Error::Ok;
  }
  for (ssize_t d = 0; d < source.dim(); ++d) {
    const int32_t bound = planned->sizes()->Get(static_cast<uint32_t>(d));
    ET_CHECK_OR_RETURN_ERROR(source.size(d) >= 0 && source.size(d) <= bound,
                             InvalidArgument,
                             "Method '%s' input %zu: size %zd at dim %zd is "
                             "above its upper bound %d",
                             method_name(),
                             input_idx,
                             source.size(d),
                             d,
                             bound);
  }
  return Error::Ok;
}

Error Method::set_inputs(const ArrayRef<EValue>& inputs) {
  ET_CHECK_OR_RETURN_ERROR(inputs.size() == inputs_size(),
                           InvalidArgument,
                           "Method '%s' takes %zu inputs, got %zu",
                           method_name(),
                           inputs_size(),
                           inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(set_input(inputs[i], i));
  }
  return Error::Ok;
}

Error Method::set_output_data_ptr(void* buffer,
                                  size_t size,
                                  size_t output_idx) {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_,
      InvalidState,
      "set_output_data_ptr on a method that is not loaded");
  ET_CHECK_OR_RETURN_ERROR(output_idx < outputs_size(),
                           InvalidArgument,
                           "Method '%s': output index %zu out of range: %zu "
                           "outputs",
                           method_name(),
                           output_idx,
                           outputs_size());
  EValue& output = mutable_output(output_idx);
  ET_CHECK_OR_RETURN_ERROR(output.isTensor(),
                           InvalidArgument,
                           "Method '%s' output %zu is a %s, not a Tensor",
                           method_name(),
                           output_idx,
                           tag_to_string(output.tag));
  ET_CHECK_OR_RETURN_ERROR(!is_planned_tensor(get_output_index(output_idx)),
                           InvalidState,
                           "Method '%s' output %zu is memory planned; its "
                           "buffer cannot be replaced",
                           method_name(),
                           output_idx);
  Tensor& tensor = output.toTensor();
  // A dynamic output may grow back to its capacity in a later execute().
  const size_t capacity_bytes =
      static_cast<size_t>(tensor.unsafeGetTensorImpl()->capacity_numel()) *
      tensor.element_size();
  ET_CHECK_OR_RETURN_ERROR(buffer != nullptr && size >= capacity_bytes,
                           InvalidArgument,
                           "Method '%s' output %zu needs %zu bytes, got a "
                           "buffer of %zu",
                           method_name(),
                           output_idx,
                           capacity_bytes,
                           buffer == nullptr ? 0 : size);
  tensor.set_data(buffer);
  return Error::Ok;
}

Error Method::get_outputs(EValue* output_evalues, size_t length) {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_, InvalidState, "get_outputs on a method that is not loaded");
  ET_CHECK_OR_RETURN_ERROR(
      output_evalues != nullptr && length >= outputs_size(),
      InvalidArgument,
      "Method '%s' has %zu outputs, but room for %zu was given",
      method_name(),
      outputs_size(),
      output_evalues == nullptr ? 0 : length);
  for (size_t i = 0; i < outputs_size(); ++i) {
    output_evalues[i] = get_output(i);
  }
  return Error::Ok;
}

Error Method::get_inputs(EValue* input_evalues, size_t length) {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_, InvalidState, "get_inputs on a method that is not loaded");
  ET_CHECK_OR_RETURN_ERROR(
      input_evalues != nullptr && length >= inputs_size(),
      InvalidArgument,
      "Method '%s' has %zu inputs, but room for %zu was given",
      method_name(),
      inputs_size(),
      input_evalues == nullptr ? 0 : length);
  for (size_t i = 0; i < inputs_size(); ++i) {
    input_evalues[i] = get_input(i);
  }
  return Error::Ok;
}

// ---------------------------------------------------------------------------
// Execution

Error Method::check_io_ready() const {
  for (size_t i = 0; i < inputs_size(); ++i) {
    const EValue& input = get_input(i);
    ET_CHECK_OR_RETURN_ERROR(!input.isTensor() ||
                                 input.toTensor().nbytes() == 0 ||
                                 input.toTensor().const_data_ptr() != nullptr,
                             InvalidState,
                             "Method '%s': input %zu has no data; call "
                             "set_input() before execute()",
                             method_name(),
                             i);
  }
  for (size_t i = 0; i < outputs_size(); ++i) {
    const EValue& output = get_output(i);
    ET_CHECK_OR_RETURN_ERROR(
        !output.isTensor() || output.toTensor().nbytes() == 0 ||
            output.toTensor().const_data_ptr() != nullptr,
        InvalidState,
        "Method '%s': output %zu is not memory planned and has no buffer; "
        "call set_output_data_ptr() before execute()",
        method_name(),
        i);
  }
  return Error::Ok;
}

Error Method::execute() {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_, InvalidState, "execute on a method that is not loaded");
  ET_CHECK_OK_OR_RETURN_ERROR(reset_execution());
  ET_CHECK_OK_OR_RETURN_ERROR(check_io_ready());
  internal::event_tracer_create_event_block(event_tracer_, "Execute");
  {
    internal::EventTracerProfileMethodScope scope(event_tracer_,
                                                  "Method::execute");
    jumped_back_ = false;
    size_t executed = 0;
    while (step_state_chain_ < n_chains_) {
      if (max_instructions_ != 0 && executed++ == max_instructions_) {
        report_exhausted_budget();
        (void)reset_execution();
        return Error::InvalidState;
      }
      const Error error = execute_instruction();
      if (error != Error::Ok) {
        // Start over on the next call.
        (void)reset_execution();
        return error;
      }
    }
  }
  if (event_tracer_ != nullptr) {
    for (size_t i = 0; i < outputs_size(); ++i) {
      internal::event_tracer_log_evalue_output(event_tracer_, get_output(i));
    }
  }
  return reset_execution();
}

Error Method::step() {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_, InvalidState, "step on a method that is not loaded");
  if (step_state_chain_ >= n_chains_) {
    return Error::EndOfMethod;
  }
  if (step_state_chain_ == 0 && step_state_instruction_ == 0) {
    ET_CHECK_OK_OR_RETURN_ERROR(check_io_ready());
  }
  return execute_instruction();
}

Error Method::reset_execution() {
  ET_CHECK_OR_RETURN_ERROR(initialized_,
                           InvalidState,
                           "reset_execution on a method that is not loaded");
  step_state_chain_ = 0;
  step_state_instruction_ = 0;
  // Skip leading empty chains so the program counter always points at an
  // instruction or at the end.
  while (step_state_chain_ < n_chains_ &&
         chains_[step_state_chain_].num_instructions == 0) {
    ++step_state_chain_;
  }
  return Error::Ok;
}

Error Method::reset_mutable_buffers() {
  ET_CHECK_OR_RETURN_ERROR(
      initialized_,
      InvalidState,
      "reset_mutable_buffers on a method that is not loaded");
  const auto* s_values = serialization_plan_->values();
  for (size_t i = 0; i < n_value_; ++i) {
    const auto* s_tensor = s_values->Get(i)->val_as_Tensor();
    if (s_tensor == nullptr || !internal::has_initial_state(s_tensor)) {
      continue;
    }
    Tensor tensor = values_[i].toTensor();
    ET_CHECK_OK_OR_RETURN_ERROR(
        internal::load_initial_state(program_,
                                     s_tensor,
                                     tensor.mutable_data_ptr(),
                                     tensor.nbytes(),
                                     {method_name(), i}));
  }
  return Error::Ok;
}

Error Method::execute_instruction() {
  const Chain& chain = chains_[step_state_chain_];
  const size_t index = step_state_instruction_;
  const auto* instruction = chain.s_chain->instructions()->Get(index);
  // Events recorded while this instruction runs carry its chain and index.
  internal::EventTracerProfileInstructionScope instruction_scope(
      event_tracer_,
      static_cast<ChainID>(step_state_chain_),
      static_cast<DebugHandle>(index));
  size_t next = index + 1;
  switch (instruction->instr_args_type()) {
    case InstructionArguments::KernelCall: {
      internal::EventTracerProfileOpScope scope(event_tracer_, "OPERATOR_CALL");
      ET_CHECK_OK_OR_RETURN_ERROR(execute_kernel_call(index));
      break;
    }
    case InstructionArguments::DelegateCall: {
      internal::EventTracerProfileOpScope scope(event_tracer_, "DELEGATE_CALL");
      ET_CHECK_OK_OR_RETURN_ERROR(execute_delegate_call(index));
      break;
    }
    case InstructionArguments::MoveCall: {
      const auto* call = instruction->instr_args_as_MoveCall();
      values_[call->move_to()] = values_[call->move_from()];
      break;
    }
    case InstructionArguments::JumpFalseCall: {
      const auto* call = instruction->instr_args_as_JumpFalseCall();
      Result<bool> condition = jump_condition(index);
      if (!condition.ok()) {
        return condition.error();
      }
      if (!*condition) {
        next = static_cast<size_t>(call->destination_instruction());
        if (next <= index) {
          jumped_back_ = true;
          jump_back_chain_ = step_state_chain_;
          jump_back_from_ = index;
          jump_back_to_ = next;
        }
      }
      break;
    }
    case InstructionArguments::FreeCall:
      // Planned memory is reused by the plan itself; nothing to release.
      break;
    default:
      // init_instruction() rejected every other type.
      return Error::Internal;
  }
  step_state_instruction_ = next;
  while (step_state_chain_ < n_chains_ &&
         step_state_instruction_ >=
             chains_[step_state_chain_].num_instructions) {
    ++step_state_chain_;
    step_state_instruction_ = 0;
  }
  return Error::Ok;
}

void Method::report_exhausted_budget() const {
  const auto* instruction =
      chains_[step_state_chain_].s_chain->instructions()->Get(
          step_state_instruction_);
  ET_LOG(Error,
         "Method '%s': instruction budget of %zu exhausted before chain %zu "
         "instruction %zu (%s); see Method::set_max_instructions",
         method_name(),
         max_instructions_,
         step_state_chain_,
         step_state_instruction_,
         executorch_flatbuffer::EnumNameInstructionArguments(
             instruction->instr_args_type()));
  if (jumped_back_) {
    ET_LOG(Error,
           "Method '%s': the last loop taken jumps back from chain %zu "
           "instruction %zu (JumpFalseCall) to instruction %zu",
           method_name(),
           jump_back_chain_,
           jump_back_from_,
           jump_back_to_);
  }
}

Error Method::execute_kernel_call(size_t instruction_index) {
  const LoadedInstruction& loaded =
      chains_[step_state_chain_].instructions[instruction_index];
  const auto* call = chains_[step_state_chain_]
                         .s_chain->instructions()
                         ->Get(instruction_index)
                         ->instr_args_as_KernelCall();
  KernelRuntimeContext context(event_tracer_, temp_allocator_);
  if (event_tracer_ == nullptr || !internal::event_tracer_enabled()) {
    loaded.kernel(context, Span<EValue*>(loaded.args, loaded.num_args));
  } else {
    char event_name[kMaxOperatorNameLength];
    internal::EventTracerProfileOpScope scope(
        event_tracer_,
        kernel_event_name(
            serialization_plan_->operators()->Get(call->op_index()),
            event_name,
            sizeof(event_name)));
    loaded.kernel(context, Span<EValue*>(loaded.args, loaded.num_args));
  }
  if (temp_allocator_ != nullptr) {
    temp_allocator_->reset();
  }
  const Error error = context.failure_state();
  if (error == Error::Ok && event_tracer_ != nullptr && loaded.num_args > 0) {
    // The out argument comes last.
    internal::event_tracer_log_evalue(event_tracer_,
                                      *loaded.args[loaded.num_args - 1]);
  }
  if (error != Error::Ok) {
    char name_buffer[kMaxOperatorNameLength];
    const char* name =
        operator_name(serialization_plan_->operators()->Get(call->op_index()),
                      name_buffer,
                      sizeof(name_buffer));
    ET_LOG(Error,
           "instruction %zu (operator %s) in method %s failed: %s",
           instruction_index,
           name,
           method_name(),
           to_string(error));
  }
  return error;
}

Error Method::execute_delegate_call(size_t instruction_index) {
  const LoadedInstruction& loaded =
      chains_[step_state_chain_].instructions[instruction_index];
  const auto* call = chains_[step_state_chain_]
                         .s_chain->instructions()
                         ->Get(instruction_index)
                         ->instr_args_as_DelegateCall();
  const BackendDelegate& delegate = delegates_[call->delegate_index()];
  BackendExecutionContext context(
      event_tracer_, temp_allocator_, method_name());
  const Error error =
      delegate.Execute(context, Span<EValue*>(loaded.args, loaded.num_args));
  if (temp_allocator_ != nullptr) {
    temp_allocator_->reset();
  }
  if (error == Error::Ok && event_tracer_ != nullptr) {
    // Inputs then outputs; ETRecord's instruction_id_to_num_outs_map says
    // how many trailing values are the delegate's outputs.
    for (size_t i = 0; i < loaded.num_args; ++i) {
      internal::event_tracer_log_evalue(event_tracer_, *loaded.args[i]);
    }
  }
  if (error != Error::Ok) {
    ET_LOG(Error,
           "instruction %zu (delegate %d, backend %s) in method %s failed: %s",
           instruction_index,
           call->delegate_index(),
           delegate.id(),
           method_name(),
           to_string(error));
  }
  return error;
}

Result<bool> Method::jump_condition(size_t instruction_index) const {
  const auto* call = chains_[step_state_chain_]
                         .s_chain->instructions()
                         ->Get(instruction_index)
                         ->instr_args_as_JumpFalseCall();
  const EValue& cond = values_[call->cond_value_index()];
  if (cond.isBool()) {
    return cond.toBool();
  }
  if (cond.isTensor() &&
      cond.toTensor().scalar_type() == ::executorch::aten::ScalarType::Bool &&
      cond.toTensor().numel() == 1 &&
      cond.toTensor().const_data_ptr() != nullptr) {
    // Read as a byte: a stored value other than 0/1 is not a valid bool.
    return *cond.toTensor().const_data_ptr<uint8_t>() != 0;
  }
  ET_LOG(Error,
         "instruction %zu in method %s: JumpFalseCall condition (value %d) "
         "is a %s, expected a Bool or a one-element bool Tensor",
         instruction_index,
         method_name(),
         call->cond_value_index(),
         tag_to_string(cond.tag));
  return Error::InvalidProgram;
}

} // namespace runtime
} // namespace executorch
