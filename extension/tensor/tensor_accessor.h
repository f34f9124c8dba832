#pragma once

// TensorAccessor: element access by index, a[i][j][k], over a tensor's
// data, sizes and strides (upstream ExecuTorch's names). For kernels that
// walk a tensor of known rank and element type:
//
//   auto accessor = make_tensor_accessor<float, 2>(tensor);
//   if (!accessor.ok()) { ... }          // wrong rank or element size
//   float x = (*accessor)[row][column];  // strides applied
//
// Indices are logical (the tensor's dims in order), whatever the tensor's
// dim order: the strides say where each element lives, so a channels-last
// tensor reads like a contiguous one (upstream refuses other dim orders;
// everything it accepts reads the same here). An index outside its
// dimension aborts, as indexing past an array would be a kernel bug.
//
// Ownership: an accessor points into the tensor's data and its TensorImpl's
// sizes and strides, which must outlive it. Tests: tensor_accessor_test.cpp.

#include <sys/types.h>

#include <type_traits>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/platform/assert.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {

template <typename T, ssize_t N>
class TensorAccessor;

template <typename T, ssize_t N>
::executorch::runtime::Result<TensorAccessor<T, N>> make_tensor_accessor(
    const ::executorch::aten::Tensor& tensor);

namespace internal {

// What every rank shares: the data pointer and the sizes and strides of
// the dims not yet indexed.
template <typename T, ssize_t N>
class TensorAccessorBase {
 public:
  // The size of dimension `i` of what is left to index.
  ::executorch::aten::SizesType size(ssize_t i) const {
    check_dim(i);
    return sizes_[i];
  }

  // The stride (in elements) of dimension `i` of what is left to index.
  ::executorch::aten::StridesType stride(ssize_t i) const {
    check_dim(i);
    return strides_[i];
  }

 protected:
  TensorAccessorBase(T* data,
                     const ::executorch::aten::SizesType* sizes,
                     const ::executorch::aten::StridesType* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}

  // Where index `i` of the first dimension starts.
  T* at(ssize_t i) const {
    ET_CHECK_MSG(i >= 0 && i < sizes_[0],
                 "TensorAccessor: index %zd outside [0, %zd)",
                 static_cast<ssize_t>(i),
                 static_cast<ssize_t>(sizes_[0]));
    return data_ + i * strides_[0];
  }

  T* data_;
  const ::executorch::aten::SizesType* sizes_;
  const ::executorch::aten::StridesType* strides_;

 private:
  void check_dim(ssize_t i) const {
    ET_CHECK_MSG(i >= 0 && i < N,
                 "TensorAccessor: dimension %zd outside [0, %zd)",
                 static_cast<ssize_t>(i),
                 static_cast<ssize_t>(N));
  }
};

} // namespace internal

template <typename T, ssize_t N>
class TensorAccessor : public internal::TensorAccessorBase<T, N> {
  static_assert(N > 1, "the rank-1 accessor is specialized below");

 public:
  // The rank N - 1 accessor of index `i` of the first dimension.
  TensorAccessor<T, N - 1> operator[](ssize_t i) const {
    return TensorAccessor<T, N - 1>(
        this->at(i), this->sizes_ + 1, this->strides_ + 1);
  }

 private:
  TensorAccessor(T* data,
                 const ::executorch::aten::SizesType* sizes,
                 const ::executorch::aten::StridesType* strides)
      : internal::TensorAccessorBase<T, N>(data, sizes, strides) {}

  template <typename, ssize_t>
  friend class TensorAccessor;
  friend ::executorch::runtime::Result<TensorAccessor<T, N>>
  make_tensor_accessor<T, N>(const ::executorch::aten::Tensor& tensor);
};

template <typename T>
class TensorAccessor<T, 1> : public internal::TensorAccessorBase<T, 1> {
 public:
  // Element `i`.
  T& operator[](ssize_t i) const {
    return *this->at(i);
  }

 private:
  TensorAccessor(T* data,
                 const ::executorch::aten::SizesType* sizes,
                 const ::executorch::aten::StridesType* strides)
      : internal::TensorAccessorBase<T, 1>(data, sizes, strides) {}

  template <typename, ssize_t>
  friend class TensorAccessor;
  friend ::executorch::runtime::Result<TensorAccessor<T, 1>>
  make_tensor_accessor<T, 1>(const ::executorch::aten::Tensor& tensor);
};

// An accessor of rank N over `tensor`'s elements as T (const T for
// read-only access). InvalidArgument, logged, when the tensor's rank is not
// N or its element size is not sizeof(T).
template <typename T, ssize_t N>
::executorch::runtime::Result<TensorAccessor<T, N>> make_tensor_accessor(
    const ::executorch::aten::Tensor& tensor) {
  static_assert(N > 0, "a 0-dim tensor has no index: use its data pointer");
  if (tensor.dim() != N) {
    ET_LOG(Error,
           "make_tensor_accessor: the tensor has %zd dims, the accessor %zd",
           static_cast<ssize_t>(tensor.dim()),
           static_cast<ssize_t>(N));
    return ::executorch::runtime::Error::InvalidArgument;
  }
  if (tensor.element_size() != static_cast<ssize_t>(sizeof(T))) {
    ET_LOG(Error,
           "make_tensor_accessor: the tensor's elements have %zd bytes, the "
           "accessor's type %zd",
           static_cast<ssize_t>(tensor.element_size()),
           static_cast<ssize_t>(sizeof(T)));
    return ::executorch::runtime::Error::InvalidArgument;
  }
  T* data = nullptr;
  if constexpr (std::is_const<T>::value) {
    data = tensor.const_data_ptr<std::remove_const_t<T>>();
  } else {
    data = tensor.mutable_data_ptr<T>();
  }
  return TensorAccessor<T, N>(
      data, tensor.sizes().data(), tensor.strides().data());
}

} // namespace extension
} // namespace executorch
