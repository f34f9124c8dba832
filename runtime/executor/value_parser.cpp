#include <executorch/runtime/executor/value_parser.h>

#include <new>
#include <optional>

#include <executorch/runtime/executor/schema_util.h>
#include <executorch/runtime/executor/tensor_parser.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {
namespace internal {

namespace {

using ::executorch::aten::Tensor;

// Context shared by the per-kind parsers below.
struct ParseState {
  const Program* program;
  MemoryManager* memory_manager;
  const char* method_name;
  EValue* values;
  size_t num_values;
  size_t index; // The value being parsed.
  ExternalData* external;

  MemoryAllocator* allocator() const {
    return memory_manager->method_allocator();
  }
};

// Checks list element `item` (a value index) of list value `state.index`
// and returns the value it refers to; `accepts` says which tags may appear.
template <typename Accepts>
Result<EValue*> list_element(const ParseState& state,
                             size_t position,
                             int32_t item,
                             const char* expected,
                             Accepts accepts) {
  ET_CHECK_OR_RETURN_ERROR(
      index_in_range(item, state.index),
      InvalidProgram,
      "Method '%s' value %zu: list item %zu refers to value %d, which is not "
      "an earlier value (0..%zu)",
      state.method_name,
      state.index,
      position,
      item,
      state.index);
  EValue* element = &state.values[item];
  ET_CHECK_OR_RETURN_ERROR(accepts(element->tag),
                           InvalidProgram,
                           "Method '%s' value %zu: list item %zu refers to "
                           "value %d of type %s, expected %s",
                           state.method_name,
                           state.index,
                           position,
                           item,
                           tag_to_string(element->tag),
                           expected);
  return element;
}

template <typename T>
Result<T*> allocate_list(const ParseState& state, size_t count) {
  if (count == 0) {
    return static_cast<T*>(nullptr);
  }
  T* list = state.allocator()->allocateList<T>(count);
  ET_CHECK_OR_RETURN_ERROR(list != nullptr,
                           MemoryAllocationFailed,
                           "Method '%s' value %zu: method allocator out of "
                           "memory for a list of %zu",
                           state.method_name,
                           state.index,
                           count);
  return list;
}

Result<EValue> parse_int_list(const ParseState& state,
                              const executorch_flatbuffer::IntList* list) {
  const size_t count = list->items() == nullptr ? 0 : list->items()->size();
  ET_UNWRAP(EValue * *wrapped, allocate_list<EValue*>(state, count));
  ET_UNWRAP(int64_t * unwrapped, allocate_list<int64_t>(state, count));
  for (size_t i = 0; i < count; ++i) {
    const int64_t item = list->items()->Get(i);
    ET_CHECK_OR_RETURN_ERROR(
        item >= INT32_MIN && item <= INT32_MAX,
        InvalidProgram,
        "Method '%s' value %zu: IntList item %zu (%lld) is not a value index",
        state.method_name,
        state.index,
        i,
        static_cast<long long>(item));
    ET_UNWRAP(
        wrapped[i],
        list_element(state, i, static_cast<int32_t>(item), "Int", [](Tag tag) {
          return tag == Tag::Int;
        }));
  }
  return EValue(BoxedEvalueList<int64_t>(wrapped, unwrapped, count));
}

Result<EValue> parse_tensor_list(
    const ParseState& state, const executorch_flatbuffer::TensorList* list) {
  const size_t count = list->items() == nullptr ? 0 : list->items()->size();
  ET_UNWRAP(EValue * *wrapped, allocate_list<EValue*>(state, count));
  ET_UNWRAP(Tensor * unwrapped, allocate_list<Tensor>(state, count));
  for (size_t i = 0; i < count; ++i) {
    ET_UNWRAP(
        wrapped[i],
        list_element(state, i, list->items()->Get(i), "Tensor", [](Tag tag) {
          return tag == Tag::Tensor;
        }));
    new (&unwrapped[i]) Tensor(wrapped[i]->toTensor());
  }
  return EValue(BoxedEvalueList<Tensor>(wrapped, unwrapped, count));
}

Result<EValue> parse_optional_tensor_list(
    const ParseState& state,
    const executorch_flatbuffer::OptionalTensorList* list) {
  using OptionalTensor = std::optional<Tensor>;
  const size_t count = list->items() == nullptr ? 0 : list->items()->size();
  ET_UNWRAP(EValue * *wrapped, allocate_list<EValue*>(state, count));
  ET_UNWRAP(OptionalTensor * unwrapped,
            allocate_list<OptionalTensor>(state, count));
  for (size_t i = 0; i < count; ++i) {
    new (&unwrapped[i]) OptionalTensor();
    const int32_t item = list->items()->Get(i);
    // The emitter writes -1 for a None element.
    if (item == -1) {
      wrapped[i] = nullptr;
      continue;
    }
    ET_UNWRAP(wrapped[i],
              list_element(state, i, item, "Tensor or None", [](Tag tag) {
                return tag == Tag::Tensor || tag == Tag::None;
              }));
  }
  return EValue(BoxedEvalueList<OptionalTensor>(wrapped, unwrapped, count));
}

Result<EValue> parse_bool_list(const ParseState& state,
                               const executorch_flatbuffer::BoolList* list) {
  const size_t count = list->items() == nullptr ? 0 : list->items()->size();
  ET_UNWRAP(bool* items, allocate_list<bool>(state, count));
  // Copied so a stored byte other than 0/1 cannot become an invalid bool.
  for (size_t i = 0; i < count; ++i) {
    items[i] = list->items()->Get(i) != 0;
  }
  return EValue(ArrayRef<bool>(items, count));
}

Result<EValue> parse_value(const ParseState& state,
                           const executorch_flatbuffer::EValue* s_value) {
  using executorch_flatbuffer::KernelTypes;
  // The verifier accepts a union whose type is set but whose table is
  // absent; reject that before any val_as_*() is dereferenced.
  ET_CHECK_OR_RETURN_ERROR(
      s_value->val_type() == KernelTypes::Null || s_value->val() != nullptr,
      InvalidProgram,
      "Method '%s' value %zu: type %d without data",
      state.method_name,
      state.index,
      static_cast<int>(s_value->val_type()));
  switch (s_value->val_type()) {
    case KernelTypes::Null:
      return EValue();
    case KernelTypes::Int:
      return EValue(static_cast<int64_t>(s_value->val_as_Int()->int_val()));
    case KernelTypes::Bool:
      return EValue(static_cast<bool>(s_value->val_as_Bool()->bool_val()));
    case KernelTypes::Double:
      return EValue(s_value->val_as_Double()->double_val());
    case KernelTypes::String: {
      const auto* text = s_value->val_as_String()->string_val();
      ET_CHECK_OR_RETURN_ERROR(text != nullptr,
                               InvalidProgram,
                               "Method '%s' value %zu: String without data",
                               state.method_name,
                               state.index);
      return EValue(text->c_str(), text->size());
    }
    case KernelTypes::IntList:
      return parse_int_list(state, s_value->val_as_IntList());
    case KernelTypes::DoubleList: {
      const auto* items = s_value->val_as_DoubleList()->items();
      return EValue(items == nullptr
                        ? ArrayRef<double>()
                        : ArrayRef<double>(items->data(), items->size()));
    }
    case KernelTypes::BoolList:
      return parse_bool_list(state, s_value->val_as_BoolList());
    case KernelTypes::TensorList:
      return parse_tensor_list(state, s_value->val_as_TensorList());
    case KernelTypes::OptionalTensorList:
      return parse_optional_tensor_list(state,
                                        s_value->val_as_OptionalTensorList());
    case KernelTypes::Tensor: {
      ET_UNWRAP(Tensor tensor,
                parse_tensor(state.program,
                             state.memory_manager,
                             s_value->val_as_Tensor(),
                             ValueLocation{state.method_name, state.index},
                             state.external));
      return EValue(tensor);
    }
    default:
      break;
  }
  ET_LOG(Error,
         "Method '%s' value %zu: unknown or missing value type %d",
         state.method_name,
         state.index,
         static_cast<int>(s_value->val_type()));
  return Error::InvalidProgram;
}

} // namespace

Error parse_values(const Program* program,
                   MemoryManager* memory_manager,
                   const executorch_flatbuffer::ExecutionPlan* plan,
                   EValue* values,
                   size_t num_values,
                   ExternalData* external) {
  ParseState state{program,
                   memory_manager,
                   plan->name() == nullptr ? "" : plan->name()->c_str(),
                   values,
                   num_values,
                   0,
                   external};
  for (size_t i = 0; i < num_values; ++i) {
    state.index = i;
    const auto* s_value = plan->values()->Get(i);
    ET_CHECK_OR_RETURN_ERROR(s_value != nullptr,
                             InvalidProgram,
                             "Method '%s' value %zu is missing",
                             state.method_name,
                             i);
    ET_UNWRAP(values[i], parse_value(state, s_value));
  }
  return Error::Ok;
}

} // namespace internal
} // namespace runtime
} // namespace executorch
