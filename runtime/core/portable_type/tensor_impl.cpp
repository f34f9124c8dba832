#include <executorch/runtime/core/portable_type/tensor_impl.h>

#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>

namespace executorch {
namespace runtime {
namespace etensor {

size_t elementSize(ScalarType type) {
  switch (type) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool:
    case ScalarType::QInt8:
    case ScalarType::QUInt8:
    case ScalarType::QUInt4x2:
    case ScalarType::QUInt2x4:
    case ScalarType::Bits1x8:
    case ScalarType::Bits2x4:
    case ScalarType::Bits4x2:
    case ScalarType::Bits8:
    case ScalarType::Float8_e5m2:
    case ScalarType::Float8_e4m3fn:
    case ScalarType::Float8_e5m2fnuz:
    case ScalarType::Float8_e4m3fnuz:
      return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Bits16:
    case ScalarType::UInt16:
      return 2;
    case ScalarType::Int:
    case ScalarType::Float:
    case ScalarType::QInt32:
    case ScalarType::UInt32:
    case ScalarType::ComplexHalf:
      return 4;
    case ScalarType::Long:
    case ScalarType::Double:
    case ScalarType::UInt64:
    case ScalarType::ComplexFloat:
      return 8;
    case ScalarType::ComplexDouble:
      return 16;
    case ScalarType::Undefined:
    case ScalarType::NumOptions:
      return 0;
  }
  return 0;
}

ssize_t compute_numel(const TensorImpl::SizesType* sizes, ssize_t dim) {
  ssize_t numel = 1;
  for (ssize_t i = 0; i < dim; ++i) {
    numel *= sizes[i];
  }
  return numel;
}

TensorImpl::TensorImpl(ScalarType type,
                       ssize_t dim,
                       SizesType* sizes,
                       void* data,
                       DimOrderType* dim_order,
                       StridesType* strides,
                       TensorShapeDynamism dynamism)
    : sizes_(sizes),
      dim_order_(dim_order),
      strides_(strides),
      data_(data),
      dim_(dim),
      numel_(compute_numel(sizes, dim)),
      capacity_numel_(numel_),
      type_(type),
      shape_dynamism_(dynamism) {}

size_t TensorImpl::nbytes() const {
  return static_cast<size_t>(numel_) * elementSize(type_);
}

ssize_t TensorImpl::element_size() const {
  return static_cast<ssize_t>(elementSize(type_));
}

Error TensorImpl::internal_resize_contiguous(ArrayRef<SizesType> new_sizes) {
  ET_CHECK_OR_RETURN_ERROR(static_cast<ssize_t>(new_sizes.size()) == dim_,
                           NotSupported,
                           "Cannot resize a rank-%zd tensor to rank %zu",
                           dim_,
                           new_sizes.size());
  if (dim_ == 0) {
    return Error::Ok;
  }
  bool same = true;
  bool empty = false;
  for (ssize_t i = 0; i < dim_; ++i) {
    ET_CHECK_OR_RETURN_ERROR(new_sizes[i] >= 0,
                             InvalidArgument,
                             "Negative size %d at dim %zd",
                             static_cast<int>(new_sizes[i]),
                             i);
    same = same && sizes_[i] == new_sizes[i];
    empty = empty || new_sizes[i] == 0;
  }
  if (same) {
    return Error::Ok;
  }
  ET_CHECK_OR_RETURN_ERROR(shape_dynamism_ != TensorShapeDynamism::STATIC,
                           NotSupported,
                           "Cannot resize a tensor with static shape");
  // The memory behind a tensor never grows, so DYNAMIC_UNBOUND is held to
  // its planned capacity too. The product is checked as it is formed: sizes
  // from a kernel's arguments can overflow it.
  ssize_t new_numel = empty ? 0 : 1;
  for (ssize_t i = 0; i < dim_ && !empty; ++i) {
    ET_CHECK_OR_RETURN_ERROR(
        new_numel <= capacity_numel_ / new_sizes[i],
        NotSupported,
        "Resize exceeds the planned capacity of %zd elements (size %d at "
        "dim %zd)",
        capacity_numel_,
        static_cast<int>(new_sizes[i]),
        i);
    new_numel *= new_sizes[i];
  }
  for (ssize_t i = 0; i < dim_; ++i) {
    sizes_[i] = new_sizes[i];
  }
  numel_ = new_numel;
  if (strides_ != nullptr && dim_order_ != nullptr) {
    ET_CHECK_OK_OR_RETURN_ERROR(
        dim_order_to_stride(sizes_, dim_order_, dim_, strides_));
  }
  return Error::Ok;
}

} // namespace etensor
} // namespace runtime
} // namespace executorch
