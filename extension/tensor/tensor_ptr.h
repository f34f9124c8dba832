#pragma once

// TensorPtr: a reference-counted tensor that owns its metadata (sizes, dim
// order, strides) and, unless it wraps caller memory, its data. It is a
// std::shared_ptr<Tensor>, so `*tensor_ptr` is an ordinary Tensor to pass as
// an EValue to Module or Method, and copies share one tensor.
//
// The runtime's tensors are dense in a dim order (strides follow from sizes
// and dim order). Strides given here must describe such a layout; anything
// else (views with gaps, broadcast strides) is a programming error and stops
// the program with a message, as out-of-range indexing would.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch {
namespace extension {

using TensorPtr = std::shared_ptr<::executorch::aten::Tensor>;

// Wraps `data` (not copied) as a tensor of `sizes` and `type`. `dim_order`
// and `strides` may be empty: an empty dim order follows from the strides,
// or is contiguous; empty strides follow from the dim order. `deleter`, if
// given, is called on `data` when the last TensorPtr goes away. `dynamism`
// says whether resize_tensor_ptr may change the sizes later (within the
// element count the tensor was created with).
TensorPtr make_tensor_ptr(
    std::vector<::executorch::aten::SizesType> sizes,
    void* data,
    std::vector<::executorch::aten::DimOrderType> dim_order,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND,
    std::function<void(void*)> deleter = nullptr);

// Contiguous form of the above.
inline TensorPtr make_tensor_ptr(
    std::vector<::executorch::aten::SizesType> sizes,
    void* data,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND,
    std::function<void(void*)> deleter = nullptr) {
  return make_tensor_ptr(
      std::move(sizes), data, {}, {}, type, dynamism, std::move(deleter));
}

// A tensor that owns `data`, raw bytes of `type` elements; their count must
// be the number of elements times the element size.
TensorPtr make_tensor_ptr(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<uint8_t> data,
    std::vector<::executorch::aten::DimOrderType> dim_order,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

namespace internal {

// One element converted to another element type, as static_cast would
// (Half and BFloat16 convert through float).
template <typename Out, typename In>
Out convert_element(In value) {
  if constexpr (std::is_arithmetic<Out>::value &&
                std::is_arithmetic<In>::value) {
    return static_cast<Out>(value);
  } else if constexpr (std::is_arithmetic<In>::value) {
    return Out(static_cast<float>(value));
  } else {
    return static_cast<Out>(static_cast<float>(value));
  }
}

// Satisfies ET_SWITCH's context: records that the dtype was unsupported.
struct SwitchContext {
  bool failed = false;
  void fail(::executorch::runtime::Error) {
    failed = true;
  }
};

// Converts `values` to the element type `type`, as raw bytes.
template <typename T>
std::vector<uint8_t> convert_elements(const std::vector<T>& values,
                                      ::executorch::aten::ScalarType type);

// A tensor over `data`, which it keeps alive; the element count must match
// the sizes.
template <typename T>
TensorPtr make_owning_tensor_ptr(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<T> data,
    std::vector<::executorch::aten::DimOrderType> dim_order,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type,
    ::executorch::aten::TensorShapeDynamism dynamism) {
  // The vector moves into the deleter, which keeps it alive with the tensor.
  auto owned = std::make_shared<std::vector<T>>(std::move(data));
  TensorPtr tensor = make_tensor_ptr(std::move(sizes),
                                     owned->data(),
                                     std::move(dim_order),
                                     std::move(strides),
                                     type,
                                     dynamism,
                                     [owned](void*) {});
  ET_CHECK_MSG(tensor->nbytes() == owned->size() * sizeof(T),
               "make_tensor_ptr: sizes and dtype %s need %zu bytes, data has "
               "%zu",
               ::executorch::runtime::toString(type),
               tensor->nbytes(),
               owned->size() * sizeof(T));
  return tensor;
}

} // namespace internal

// A tensor that owns `data`, elements of C++ type T. With a `type` other
// than T's, the elements are converted (as static_cast would) first.
template <typename T = float,
          ::executorch::aten::ScalarType deduced_type =
              ::executorch::runtime::CppTypeToScalarType<T>::value>
TensorPtr make_tensor_ptr(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<T> data,
    std::vector<::executorch::aten::DimOrderType> dim_order = {},
    std::vector<::executorch::aten::StridesType> strides = {},
    ::executorch::aten::ScalarType type = deduced_type,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  // std::vector<bool> packs bits, so bools are converted to bytes too.
  if (type != deduced_type || std::is_same<T, bool>::value) {
    return make_tensor_ptr(std::move(sizes),
                           internal::convert_elements(data, type),
                           std::move(dim_order),
                           std::move(strides),
                           type,
                           dynamism);
  }
  if constexpr (!std::is_same<T, bool>::value) {
    return internal::make_owning_tensor_ptr(std::move(sizes),
                                            std::move(data),
                                            std::move(dim_order),
                                            std::move(strides),
                                            type,
                                            dynamism);
  }
  return nullptr;
}

// A 1-D tensor of `data`.
template <typename T = float,
          ::executorch::aten::ScalarType deduced_type =
              ::executorch::runtime::CppTypeToScalarType<T>::value>
TensorPtr make_tensor_ptr(
    std::vector<T> data,
    ::executorch::aten::ScalarType type = deduced_type,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  std::vector<::executorch::aten::SizesType> sizes{
      static_cast<::executorch::aten::SizesType>(data.size())};
  return make_tensor_ptr(
      std::move(sizes), std::move(data), {}, {}, type, dynamism);
}

// A 1-D tensor of the listed values: make_tensor_ptr({1.f, 2.f, 3.f}).
template <typename T = float,
          ::executorch::aten::ScalarType deduced_type =
              ::executorch::runtime::CppTypeToScalarType<T>::value>
TensorPtr make_tensor_ptr(
    std::initializer_list<T> list,
    ::executorch::aten::ScalarType type = deduced_type,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return make_tensor_ptr(std::vector<T>(list), type, dynamism);
}

// A 0-dimensional tensor holding `value`.
template <typename T,
          typename = std::enable_if_t<
              std::is_arithmetic<T>::value ||
              std::is_same<T, ::executorch::aten::Half>::value ||
              std::is_same<T, ::executorch::aten::BFloat16>::value>>
TensorPtr make_tensor_ptr(T value) {
  return make_tensor_ptr(std::vector<::executorch::aten::SizesType>{},
                         std::vector<T>{value});
}

// A new TensorPtr viewing the data of `tensor` (not copied) with its own
// metadata: the same sizes and layout unless others are given. The view
// keeps `tensor` alive.
TensorPtr make_tensor_ptr(
    const TensorPtr& tensor,
    std::vector<::executorch::aten::SizesType> sizes = {},
    std::vector<::executorch::aten::DimOrderType> dim_order = {},
    std::vector<::executorch::aten::StridesType> strides = {});

// A TensorPtr with a copy of the data and metadata of `tensor`.
TensorPtr clone_tensor_ptr(const ::executorch::aten::Tensor& tensor);

inline TensorPtr clone_tensor_ptr(const TensorPtr& tensor) {
  return clone_tensor_ptr(*tensor);
}

// Changes the sizes of a dynamic tensor, keeping its rank and at most the
// element count it was created with (its data does not grow). Fails with
// NotSupported, logging why, for a STATIC tensor whose sizes would change or
// a rank or element count that does not fit; InvalidArgument for a negative
// size.
ET_NODISCARD ::executorch::runtime::Error resize_tensor_ptr(
    TensorPtr& tensor, const std::vector<::executorch::aten::SizesType>& sizes);

} // namespace extension
} // namespace executorch
