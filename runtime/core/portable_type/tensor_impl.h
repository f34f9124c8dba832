#pragma once

// TensorImpl: the metadata and data pointer of a tensor. It owns nothing: the
// sizes, dim_order and strides arrays and the data live in memory provided by
// whoever created it (the method's allocators, or the caller).

#include <cstddef>
#include <cstdint>

#include <sys/types.h> // ssize_t

#include <executorch/runtime/core/array_ref.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/portable_type/scalar_type.h>
#include <executorch/runtime/core/tensor_shape_dynamism.h>

namespace executorch {
namespace runtime {
namespace etensor {

class TensorImpl {
 public:
  using SizesType = int32_t;
  using DimOrderType = uint8_t;
  using StridesType = int32_t;

  TensorImpl() = delete;

  // `sizes`, `dim_order` and `strides` each point at `dim` elements (or may
  // be null when dim is 0); they must outlive the TensorImpl. The data buffer
  // may be null and set later with set_data().
  TensorImpl(ScalarType type,
             ssize_t dim,
             SizesType* sizes,
             void* data = nullptr,
             DimOrderType* dim_order = nullptr,
             StridesType* strides = nullptr,
             TensorShapeDynamism dynamism = TensorShapeDynamism::STATIC);

  // Bytes of element data the current sizes cover.
  size_t nbytes() const;
  ssize_t size(ssize_t dim) const {
    return sizes_[dim];
  }
  ssize_t dim() const {
    return dim_;
  }
  ssize_t numel() const {
    return numel_;
  }
  ScalarType scalar_type() const {
    return type_;
  }
  ScalarType dtype() const {
    return type_;
  }
  ssize_t element_size() const;
  ArrayRef<SizesType> sizes() const {
    return ArrayRef<SizesType>(sizes_, static_cast<size_t>(dim_));
  }
  ArrayRef<DimOrderType> dim_order() const {
    return ArrayRef<DimOrderType>(dim_order_, static_cast<size_t>(dim_));
  }
  ArrayRef<StridesType> strides() const {
    return ArrayRef<StridesType>(strides_, static_cast<size_t>(dim_));
  }
  TensorShapeDynamism shape_dynamism() const {
    return shape_dynamism_;
  }
  const void* data() const {
    return data_;
  }
  void* mutable_data() const {
    return data_;
  }
  void set_data(void* ptr) {
    data_ = ptr;
  }

  // Changes the sizes in place, keeping the tensor contiguous in its dim
  // order, and recomputes the strides. Fails when the tensor is STATIC and
  // the sizes differ, when the rank differs, or when the tensor is
  // DYNAMIC_BOUND and the new element count exceeds the planned capacity.
  ET_NODISCARD Error internal_resize_contiguous(ArrayRef<SizesType> new_sizes);

  // Element count the tensor's memory was planned for (its upper bound).
  ssize_t capacity_numel() const {
    return capacity_numel_;
  }

 private:
  SizesType* sizes_;
  DimOrderType* dim_order_;
  StridesType* strides_;
  void* data_;
  ssize_t dim_;
  ssize_t numel_;
  ssize_t capacity_numel_;
  ScalarType type_;
  TensorShapeDynamism shape_dynamism_;
};

// Bytes of one element of `type`; 0 for types with no fixed element size.
size_t elementSize(ScalarType type);

// Product of sizes (1 for an empty list).
ssize_t compute_numel(const TensorImpl::SizesType* sizes, ssize_t dim);

} // namespace etensor
} // namespace runtime
} // namespace executorch
