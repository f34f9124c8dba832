#include <executorch/runtime/executor/tensor_parser.h>

#include <new>
#include <string_view>
#include <utility>

#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/executor/schema_util.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {
namespace internal {

namespace {

using etensor::TensorImpl;
using ::executorch::aten::ScalarType;

bool is_external(const executorch_flatbuffer::Tensor* s_tensor) {
  const auto* extra = s_tensor->extra_tensor_info();
  return extra != nullptr &&
         extra->location() == executorch_flatbuffer::TensorDataLocation::EXTERNAL;
}

// Checks that the layout the data map stores for `name` is the tensor's.
Error check_external_layout(const TensorLayout& layout,
                            const char* name,
                            ScalarType type,
                            Span<const TensorImpl::SizesType> sizes,
                            Span<const TensorImpl::DimOrderType> dim_order,
                            ValueLocation where) {
  bool same = layout.scalar_type() == type &&
              layout.sizes().size() == sizes.size() &&
              layout.dim_order().size() == dim_order.size();
  for (size_t d = 0; same && d < sizes.size(); ++d) {
    same = layout.sizes()[d] == sizes[d] &&
           layout.dim_order()[d] == dim_order[d];
  }
  if (!same) {
    ET_LOG(Error,
           "Method '%s' value %zu: external tensor '%s' is %s of rank %zu in "
           "the data file but the program expects %s of rank %zu with other "
           "sizes or dim order; the data file belongs to another export",
           where.method_name,
           where.value_index,
           name,
           toString(layout.scalar_type()),
           layout.sizes().size(),
           toString(type),
           sizes.size());
    return Error::InvalidExternalData;
  }
  return Error::Ok;
}

// The data of an EXTERNAL tensor, looked up by its fully qualified name:
// loaded into `planned` when the tensor is planned (a mutable weight),
// otherwise kept in a buffer the Method owns.
Result<void*> external_tensor_data(
    const executorch_flatbuffer::Tensor* s_tensor,
    ScalarType type,
    Span<const TensorImpl::SizesType> sizes,
    Span<const TensorImpl::DimOrderType> dim_order,
    size_t nbytes,
    void* planned,
    ValueLocation where,
    ExternalData* external) {
  const auto* fqn = s_tensor->extra_tensor_info()->fully_qualified_name();
  ET_CHECK_OR_RETURN_ERROR(fqn != nullptr,
                           InvalidProgram,
                           "Method '%s' value %zu: external tensor without a "
                           "fully_qualified_name",
                           where.method_name,
                           where.value_index);
  const char* name = fqn->c_str();
  ET_CHECK_OR_RETURN_ERROR(
      external != nullptr && external->map != nullptr,
      NotFound,
      "Method '%s' value %zu: tensor '%s' is stored outside the .pte; load "
      "the method with its data file (.ptd)",
      where.method_name,
      where.value_index,
      name);
  const std::string_view key(fqn->c_str(), fqn->size());
  Result<const TensorLayout> layout = external->map->get_tensor_layout(key);
  ET_CHECK_OR_RETURN_ERROR(layout.ok(),
                           NotFound,
                           "Method '%s' value %zu: tensor '%s' is not in the "
                           "data file (.ptd) given to load_method",
                           where.method_name,
                           where.value_index,
                           name);
  ET_CHECK_OK_OR_RETURN_ERROR(
      check_external_layout(*layout, name, type, sizes, dim_order, where));
  if (planned != nullptr) {
    ET_CHECK_OK_OR_RETURN_ERROR(
        external->map->load_data_into(key, planned, nbytes));
    return planned;
  }
  ET_CHECK_OR_RETURN_ERROR(external->count < external->capacity,
                           Internal,
                           "Method '%s' value %zu: more external constants "
                           "than counted",
                           where.method_name,
                           where.value_index);
  Result<FreeableBuffer> data = external->map->get_data(key);
  ET_CHECK_OR_RETURN_ERROR(data.ok(),
                           NotFound,
                           "Method '%s' value %zu: cannot load tensor '%s' "
                           "from the data file",
                           where.method_name,
                           where.value_index,
                           name);
  ET_CHECK_OR_RETURN_ERROR(data->size() >= nbytes,
                           InvalidExternalData,
                           "Method '%s' value %zu: tensor '%s' has %zu bytes "
                           "in the data file, %zu expected",
                           where.method_name,
                           where.value_index,
                           name,
                           data->size(),
                           nbytes);
  FreeableBuffer& kept = external->buffers[external->count++];
  kept = std::move(*data);
  // Constants are never written: Method::load refuses a kernel call that
  // would (check_kernel_args in method.cpp).
  return const_cast<void*>(kept.data());
}

// The tensor's data pointer: a constant, planned memory, or null for data
// the caller supplies later.
Result<void*> tensor_data(const Program* program,
                          MemoryManager* memory_manager,
                          const executorch_flatbuffer::Tensor* s_tensor,
                          size_t nbytes,
                          ValueLocation where) {
  const auto* allocation = s_tensor->allocation_info();
  if (allocation != nullptr) {
    // memory_id 0 is reserved in the format; buffer k of the program is
    // planned buffer k - 1 of the HierarchicalAllocator.
    const uint32_t memory_id = allocation->memory_id();
    ET_CHECK_OR_RETURN_ERROR(
        memory_id > 0,
        InvalidProgram,
        "Method '%s' value %zu: allocation_info.memory_id is 0 (reserved)",
        where.method_name,
        where.value_index);
    HierarchicalAllocator* planned = memory_manager->planned_memory();
    ET_CHECK_OR_RETURN_ERROR(
        planned != nullptr,
        InvalidArgument,
        "Method '%s' value %zu is memory planned but the MemoryManager has "
        "no planned memory",
        where.method_name,
        where.value_index);
    const uint64_t offset =
        (static_cast<uint64_t>(allocation->memory_offset_high()) << 32) |
        allocation->memory_offset_low();
    Result<void*> address =
        planned->get_offset_address(memory_id - 1, offset, nbytes);
    if (!address.ok()) {
      ET_LOG(Error,
             "Method '%s' value %zu: planned placement (memory_id %u, offset "
             "%llu, %zu bytes) does not fit the provided planned memory",
             where.method_name,
             where.value_index,
             memory_id,
             static_cast<unsigned long long>(offset),
             nbytes);
      return Error::InvalidProgram;
    }
    if (has_initial_state(s_tensor)) {
      ET_CHECK_OK_OR_RETURN_ERROR(
          load_initial_state(program, s_tensor, *address, nbytes, where));
    }
    return *address;
  }
  if (s_tensor->data_buffer_idx() > 0) {
    Result<const void*> constant =
        program->get_constant_buffer_data(s_tensor->data_buffer_idx(), nbytes);
    if (!constant.ok()) {
      ET_LOG(Error,
             "Method '%s' value %zu: bad constant data (data_buffer_idx %u)",
             where.method_name,
             where.value_index,
             s_tensor->data_buffer_idx());
      return constant.error();
    }
    // Constants are never written: Method::load refuses a kernel call that
  // would (check_kernel_args in method.cpp).
    return const_cast<void*>(*constant);
  }
  return static_cast<void*>(nullptr);
}

} // namespace

bool has_initial_state(const executorch_flatbuffer::Tensor* s_tensor) {
  return s_tensor->allocation_info() != nullptr &&
         s_tensor->data_buffer_idx() > 0;
}

Error load_initial_state(const Program* program,
                         const executorch_flatbuffer::Tensor* s_tensor,
                         void* data,
                         size_t nbytes,
                         ValueLocation where) {
  const auto* extra = s_tensor->extra_tensor_info();
  const size_t segments_index =
      extra == nullptr ? 0 : extra->mutable_data_segments_idx();
  const Error loaded = program->load_mutable_subsegment_into(
      segments_index, s_tensor->data_buffer_idx(), nbytes, data);
  ET_CHECK_OR_RETURN_ERROR(
      loaded == Error::Ok,
      InvalidProgram,
      "Method '%s' value %zu: cannot load the initial state of a mutable "
      "tensor (%s, %zu bytes) from mutable_data_segments[%zu] entry %u",
      where.method_name,
      where.value_index,
      ::executorch::runtime::toString(
          static_cast<ScalarType>(s_tensor->scalar_type())),
      nbytes,
      segments_index,
      s_tensor->data_buffer_idx());
  return Error::Ok;
}

size_t count_external_constants(
    const executorch_flatbuffer::ExecutionPlan* plan) {
  size_t count = 0;
  const auto* values = plan->values();
  for (size_t i = 0; values != nullptr && i < values->size(); ++i) {
    const auto* value = values->Get(i);
    const auto* s_tensor = value == nullptr ? nullptr : value->val_as_Tensor();
    if (s_tensor != nullptr && is_external(s_tensor) &&
        s_tensor->allocation_info() == nullptr) {
      ++count;
    }
  }
  return count;
}

Result<::executorch::aten::Tensor> parse_tensor(
    const Program* program,
    MemoryManager* memory_manager,
    const executorch_flatbuffer::Tensor* s_tensor,
    ValueLocation where,
    ExternalData* external) {
  const int8_t raw_type = static_cast<int8_t>(s_tensor->scalar_type());
  ET_CHECK_OR_RETURN_ERROR(is_valid_scalar_type(raw_type),
                           InvalidProgram,
                           "Method '%s' value %zu: unknown scalar_type %d",
                           where.method_name,
                           where.value_index,
                           raw_type);
  const ScalarType type = static_cast<ScalarType>(raw_type);
  const int8_t raw_dynamism = static_cast<int8_t>(s_tensor->shape_dynamism());
  ET_CHECK_OR_RETURN_ERROR(
      raw_dynamism >= 0 &&
          raw_dynamism <=
              static_cast<int8_t>(TensorShapeDynamism::DYNAMIC_UNBOUND),
      InvalidProgram,
      "Method '%s' value %zu: unknown shape_dynamism %d",
      where.method_name,
      where.value_index,
      raw_dynamism);
  const auto* s_sizes = s_tensor->sizes();
  const auto* s_dim_order = s_tensor->dim_order();
  const size_t rank = s_sizes == nullptr ? 0 : s_sizes->size();
  const size_t order_rank = s_dim_order == nullptr ? 0 : s_dim_order->size();
  ET_CHECK_OR_RETURN_ERROR(rank <= kMaxTensorRank,
                           InvalidProgram,
                           "Method '%s' value %zu: rank %zu exceeds the limit "
                           "of %zu",
                           where.method_name,
                           where.value_index,
                           rank,
                           kMaxTensorRank);
  ET_CHECK_OR_RETURN_ERROR(rank == order_rank,
                           InvalidProgram,
                           "Method '%s' value %zu: %zu sizes but %zu dim_order "
                           "entries",
                           where.method_name,
                           where.value_index,
                           rank,
                           order_rank);

  // Sizes are copied because resizing changes them; dim_order is copied so
  // the tensor does not alias the (read-only) program data.
  MemoryAllocator* allocator = memory_manager->method_allocator();
  auto* sizes = allocator->allocateList<TensorImpl::SizesType>(rank);
  auto* dim_order = allocator->allocateList<TensorImpl::DimOrderType>(rank);
  auto* strides = allocator->allocateList<TensorImpl::StridesType>(rank);
  auto* impl = allocator->allocateInstance<TensorImpl>();
  ET_CHECK_OR_RETURN_ERROR(
      impl != nullptr &&
          (rank == 0 ||
           (sizes != nullptr && dim_order != nullptr && strides != nullptr)),
      MemoryAllocationFailed,
      "Method '%s' value %zu: method allocator out of memory for tensor "
      "metadata",
      where.method_name,
      where.value_index);
  for (size_t d = 0; d < rank; ++d) {
    sizes[d] = s_sizes->Get(d);
    dim_order[d] = s_dim_order->Get(d);
    ET_CHECK_OR_RETURN_ERROR(sizes[d] >= 0,
                             InvalidProgram,
                             "Method '%s' value %zu: negative size %d at dim "
                             "%zu",
                             where.method_name,
                             where.value_index,
                             sizes[d],
                             d);
  }
  size_t nbytes = 0;
  ET_CHECK_OR_RETURN_ERROR(checked_nbytes(sizes, rank, type, &nbytes),
                           InvalidProgram,
                           "Method '%s' value %zu: tensor byte size overflows",
                           where.method_name,
                           where.value_index);
  if (dim_order_to_stride(sizes, dim_order, rank, strides) != Error::Ok) {
    ET_LOG(Error,
           "Method '%s' value %zu: dim_order and sizes give no valid strides",
           where.method_name,
           where.value_index);
    return Error::InvalidProgram;
  }
  void* data = nullptr;
  if (is_external(s_tensor)) {
    void* planned = nullptr;
    if (s_tensor->allocation_info() != nullptr) {
      // A planned external tensor has no data_buffer_idx: this only
      // resolves its planned address.
      ET_UNWRAP(planned,
                tensor_data(program, memory_manager, s_tensor, nbytes, where));
    }
    ET_UNWRAP(data,
              external_tensor_data(
                  s_tensor,
                  type,
                  Span<const TensorImpl::SizesType>(sizes, rank),
                  Span<const TensorImpl::DimOrderType>(dim_order, rank),
                  nbytes,
                  planned,
                  where,
                  external));
  } else {
    ET_UNWRAP(data,
              tensor_data(program, memory_manager, s_tensor, nbytes, where));
  }
  // Bool elements from the file (constants, initial states, external data)
  // must be 0 or 1: kernels read them as C++ bool, for which any other byte
  // is undefined.
  if (type == ScalarType::Bool && data != nullptr &&
      (is_external(s_tensor) || s_tensor->data_buffer_idx() > 0)) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < nbytes; ++i) {
      ET_CHECK_OR_RETURN_ERROR(bytes[i] <= 1,
                               InvalidProgram,
                               "Method '%s' value %zu: bool element %zu is "
                               "the byte %u, not 0 or 1",
                               where.method_name,
                               where.value_index,
                               i,
                               static_cast<unsigned>(bytes[i]));
    }
  }
  // Kernels load elements through typed pointers: an offset that is not a
  // multiple of the element size would be a misaligned (undefined) access.
  const size_t element_size = elementSize(type);
  ET_CHECK_OR_RETURN_ERROR(
      reinterpret_cast<uintptr_t>(data) % element_size == 0,
      InvalidProgram,
      "Method '%s' value %zu: data at address %p is not aligned to its "
      "%zu-byte elements",
      where.method_name,
      where.value_index,
      data,
      element_size);
  new (impl) TensorImpl(type,
                        static_cast<ssize_t>(rank),
                        sizes,
                        data,
                        dim_order,
                        strides,
                        static_cast<TensorShapeDynamism>(raw_dynamism));
  return ::executorch::aten::Tensor(impl);
}

} // namespace internal
} // namespace runtime
} // namespace executorch
