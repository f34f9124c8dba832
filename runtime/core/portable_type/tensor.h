#pragma once

// Tensor: a thin handle to a TensorImpl, passed by value or reference. Like
// the TensorImpl it points to, it owns nothing.

#include <executorch/runtime/core/portable_type/tensor_impl.h>

namespace executorch {
namespace runtime {
namespace etensor {

class Tensor {
 public:
  using SizesType = TensorImpl::SizesType;
  using DimOrderType = TensorImpl::DimOrderType;
  using StridesType = TensorImpl::StridesType;

  Tensor() = delete;
  explicit constexpr Tensor(TensorImpl* impl) : impl_(impl) {}

  TensorImpl* unsafeGetTensorImpl() const {
    return impl_;
  }

  size_t nbytes() const {
    return impl_->nbytes();
  }
  ssize_t size(ssize_t dim) const {
    return impl_->size(dim < 0 ? dim + impl_->dim() : dim);
  }
  ssize_t dim() const {
    return impl_->dim();
  }
  ssize_t numel() const {
    return impl_->numel();
  }
  ScalarType scalar_type() const {
    return impl_->scalar_type();
  }
  ScalarType dtype() const {
    return impl_->scalar_type();
  }
  ssize_t element_size() const {
    return impl_->element_size();
  }
  ArrayRef<SizesType> sizes() const {
    return impl_->sizes();
  }
  ArrayRef<DimOrderType> dim_order() const {
    return impl_->dim_order();
  }
  ArrayRef<StridesType> strides() const {
    return impl_->strides();
  }
  TensorShapeDynamism shape_dynamism() const {
    return impl_->shape_dynamism();
  }

  template <typename T>
  const T* const_data_ptr() const {
    return static_cast<const T*>(impl_->data());
  }
  const void* const_data_ptr() const {
    return impl_->data();
  }
  template <typename T>
  T* mutable_data_ptr() const {
    return static_cast<T*>(impl_->mutable_data());
  }
  void* mutable_data_ptr() const {
    return impl_->mutable_data();
  }
  template <typename T>
  T* data_ptr() const {
    return mutable_data_ptr<T>();
  }
  void* data_ptr() const {
    return impl_->mutable_data();
  }
  void set_data(void* ptr) const {
    impl_->set_data(ptr);
  }

 private:
  TensorImpl* impl_;
};

} // namespace etensor
} // namespace runtime
} // namespace executorch
