#include <executorch/runtime/executor/method_meta.h>

#include <cstring>

#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/executor/schema_util.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {

namespace {

using internal::index_in_range;

size_t vector_size(const flatbuffers::Vector<int32_t>* v) {
  return v == nullptr ? 0 : v->size();
}

// The serialized value that input/output `index` refers to.
Result<const executorch_flatbuffer::EValue*> io_value(
    const executorch_flatbuffer::ExecutionPlan* plan,
    const flatbuffers::Vector<int32_t>* io,
    size_t index,
    const char* kind) {
  ET_CHECK_OR_RETURN_ERROR(index < vector_size(io),
                           InvalidArgument,
                           "%s index %zu out of range: method has %zu %ss",
                           kind,
                           index,
                           vector_size(io),
                           kind);
  const int32_t value_index = io->Get(index);
  const auto* values = plan->values();
  const size_t num_values = values == nullptr ? 0 : values->size();
  ET_CHECK_OR_RETURN_ERROR(
      index_in_range(value_index, num_values),
      InvalidProgram,
      "%s %zu refers to value %d, out of range: %zu values",
      kind,
      index,
      value_index,
      num_values);
  return values->Get(value_index);
}

Result<Tag> io_tag(const executorch_flatbuffer::ExecutionPlan* plan,
                   const flatbuffers::Vector<int32_t>* io,
                   size_t index,
                   const char* kind) {
  ET_UNWRAP(const auto* value, io_value(plan, io, index, kind));
  return internal::tag_for_value_type(value->val_type());
}

Result<TensorInfo> io_tensor_info(
    const executorch_flatbuffer::ExecutionPlan* plan,
    const flatbuffers::Vector<int32_t>* io,
    size_t index,
    const char* kind) {
  ET_UNWRAP(const auto* value, io_value(plan, io, index, kind));
  const auto* tensor = value->val_as_Tensor();
  ET_CHECK_OR_RETURN_ERROR(
      tensor != nullptr,
      InvalidArgument,
      "%s %zu is a %s, not a Tensor",
      kind,
      index,
      tag_to_string(internal::tag_for_value_type(value->val_type())));
  const int8_t raw_type = static_cast<int8_t>(tensor->scalar_type());
  ET_CHECK_OR_RETURN_ERROR(internal::is_valid_scalar_type(raw_type),
                           InvalidProgram,
                           "%s %zu has unknown scalar type %d",
                           kind,
                           index,
                           raw_type);
  const auto* sizes = tensor->sizes();
  const auto* dim_order = tensor->dim_order();
  const size_t rank = sizes == nullptr ? 0 : sizes->size();
  const size_t order_rank = dim_order == nullptr ? 0 : dim_order->size();
  ET_CHECK_OR_RETURN_ERROR(rank == order_rank,
                           InvalidProgram,
                           "%s %zu has %zu sizes but %zu dim_order entries",
                           kind,
                           index,
                           rank,
                           order_rank);
  // Callers build tensors from this metadata (strides from the dim order):
  // it gets the checks the method's load makes.
  ET_CHECK_OR_RETURN_ERROR(rank <= internal::kMaxTensorRank,
                           InvalidProgram,
                           "%s %zu: rank %zu exceeds the limit of %zu",
                           kind,
                           index,
                           rank,
                           internal::kMaxTensorRank);
  bool seen[internal::kMaxTensorRank] = {};
  for (size_t d = 0; d < rank; ++d) {
    const uint8_t dim = dim_order->Get(d);
    ET_CHECK_OR_RETURN_ERROR(dim < rank && !seen[dim],
                             InvalidProgram,
                             "%s %zu: dim_order is not a permutation (entry "
                             "%zu is %u)",
                             kind,
                             index,
                             d,
                             static_cast<unsigned>(dim));
    seen[dim] = true;
  }
  for (size_t d = 0; d < rank; ++d) {
    ET_CHECK_OR_RETURN_ERROR(sizes->Get(d) >= 0,
                             InvalidProgram,
                             "%s %zu has negative size %d at dim %zu",
                             kind,
                             index,
                             sizes->Get(d),
                             d);
  }
  size_t nbytes = 0;
  ET_CHECK_OR_RETURN_ERROR(
      rank == 0 || internal::checked_nbytes(
                       sizes->data(),
                       rank,
                       static_cast<::executorch::aten::ScalarType>(raw_type),
                       &nbytes),
      InvalidProgram,
      "%s %zu: byte size overflows",
      kind,
      index);
  return TensorInfo(
      ArrayRef<int32_t>(rank == 0 ? nullptr : sizes->data(), rank),
      ArrayRef<uint8_t>(rank == 0 ? nullptr : dim_order->data(), rank),
      static_cast<::executorch::aten::ScalarType>(raw_type),
      tensor->allocation_info() != nullptr,
      static_cast<TensorShapeDynamism>(tensor->shape_dynamism()));
}

} // namespace

TensorInfo::TensorInfo(ArrayRef<int32_t> sizes,
                       ArrayRef<uint8_t> dim_order,
                       ::executorch::aten::ScalarType scalar_type,
                       bool is_memory_planned,
                       TensorShapeDynamism shape_dynamism)
    : sizes_(sizes),
      dim_order_(dim_order),
      scalar_type_(scalar_type),
      is_memory_planned_(is_memory_planned),
      shape_dynamism_(shape_dynamism),
      nbytes_(static_cast<size_t>(
                  etensor::compute_numel(sizes.data(), sizes.size())) *
              etensor::elementSize(scalar_type)) {}

const char* MethodMeta::name() const {
  return plan_->name() == nullptr ? "" : plan_->name()->c_str();
}

size_t MethodMeta::num_inputs() const {
  return vector_size(plan_->inputs());
}

Result<Tag> MethodMeta::input_tag(size_t index) const {
  return io_tag(plan_, plan_->inputs(), index, "input");
}

Result<TensorInfo> MethodMeta::input_tensor_meta(size_t index) const {
  return io_tensor_info(plan_, plan_->inputs(), index, "input");
}

size_t MethodMeta::num_outputs() const {
  return vector_size(plan_->outputs());
}

Result<Tag> MethodMeta::output_tag(size_t index) const {
  return io_tag(plan_, plan_->outputs(), index, "output");
}

Result<TensorInfo> MethodMeta::output_tensor_meta(size_t index) const {
  return io_tensor_info(plan_, plan_->outputs(), index, "output");
}

size_t MethodMeta::num_memory_planned_buffers() const {
  const auto* sizes = plan_->non_const_buffer_sizes();
  // Entry 0 is reserved by the format and is not a buffer.
  return sizes == nullptr || sizes->size() == 0 ? 0 : sizes->size() - 1;
}

Result<int64_t> MethodMeta::memory_planned_buffer_size(size_t index) const {
  ET_CHECK_OR_RETURN_ERROR(index < num_memory_planned_buffers(),
                           InvalidArgument,
                           "Planned buffer index %zu out of range: %zu buffers",
                           index,
                           num_memory_planned_buffers());
  return plan_->non_const_buffer_sizes()->Get(index + 1);
}

size_t MethodMeta::num_instructions() const {
  const auto* chains = plan_->chains();
  if (chains == nullptr) {
    return 0;
  }
  size_t count = 0;
  for (const auto* chain : *chains) {
    count +=
        chain->instructions() == nullptr ? 0 : chain->instructions()->size();
  }
  return count;
}

size_t MethodMeta::num_backends() const {
  return plan_->delegates() == nullptr ? 0 : plan_->delegates()->size();
}

Result<const char*> MethodMeta::get_backend_name(size_t index) const {
  ET_CHECK_OR_RETURN_ERROR(index < num_backends(),
                           InvalidArgument,
                           "Backend index %zu out of range: %zu delegates",
                           index,
                           num_backends());
  const auto* id = plan_->delegates()->Get(index)->id();
  ET_CHECK_OR_RETURN_ERROR(
      id != nullptr, InvalidProgram, "Delegate %zu has no backend id", index);
  return id->c_str();
}

bool MethodMeta::uses_backend(const char* backend_name) const {
  if (backend_name == nullptr) {
    return false;
  }
  for (size_t i = 0; i < num_backends(); ++i) {
    const auto* id = plan_->delegates()->Get(i)->id();
    if (id != nullptr && std::strcmp(id->c_str(), backend_name) == 0) {
      return true;
    }
  }
  return false;
}

} // namespace runtime
} // namespace executorch
