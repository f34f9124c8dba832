#include <executorch/runtime/executor/schema_util.h>

#include <executorch/runtime/core/portable_type/tensor_impl.h>

namespace executorch {
namespace runtime {
namespace internal {

bool is_valid_scalar_type(int8_t raw) {
  using etensor::ScalarType;
  if (raw < 0 || raw >= static_cast<int8_t>(ScalarType::Undefined)) {
    return false;
  }
  return etensor::elementSize(static_cast<ScalarType>(raw)) != 0;
}

bool checked_nbytes(const int32_t* sizes,
                    size_t rank,
                    etensor::ScalarType type,
                    size_t* nbytes) {
  size_t total = etensor::elementSize(type);
  for (size_t d = 0; d < rank; ++d) {
    const size_t size = static_cast<size_t>(sizes[d]);
    if (size != 0 && total > SIZE_MAX / size) {
      return false;
    }
    total *= size;
  }
  *nbytes = total;
  return true;
}

Tag tag_for_value_type(executorch_flatbuffer::KernelTypes type) {
  using executorch_flatbuffer::KernelTypes;
  switch (type) {
    case KernelTypes::Int:
      return Tag::Int;
    case KernelTypes::Bool:
      return Tag::Bool;
    case KernelTypes::Double:
      return Tag::Double;
    case KernelTypes::Tensor:
      return Tag::Tensor;
    case KernelTypes::String:
      return Tag::String;
    case KernelTypes::IntList:
      return Tag::ListInt;
    case KernelTypes::DoubleList:
      return Tag::ListDouble;
    case KernelTypes::BoolList:
      return Tag::ListBool;
    case KernelTypes::TensorList:
      return Tag::ListTensor;
    case KernelTypes::OptionalTensorList:
      return Tag::ListOptionalTensor;
    default:
      return Tag::None;
  }
}

} // namespace internal
} // namespace runtime
} // namespace executorch
