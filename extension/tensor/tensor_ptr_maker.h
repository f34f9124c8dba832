#pragma once

// Factories for TensorPtrs: wrap caller memory (from_blob), or allocate and
// fill (empty, full, zeros, ones, rand, randn, randint and their _like forms,
// which copy another tensor's sizes, layout and, unless told otherwise,
// dtype). Random values come from a per-thread generator seeded once from
// std::random_device.

#include <functional>
#include <vector>

#include <executorch/extension/tensor/tensor_ptr.h>

namespace executorch {
namespace extension {

// Wraps `data` (not copied, not freed) as a contiguous tensor.
inline TensorPtr from_blob(
    void* data,
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return make_tensor_ptr(std::move(sizes), data, {}, {}, type, dynamism);
}

// Wraps `data` laid out with dense `strides`.
inline TensorPtr from_blob(
    void* data,
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return make_tensor_ptr(
      std::move(sizes), data, {}, std::move(strides), type, dynamism);
}

// Wraps `data` and calls `deleter` on it when the last TensorPtr goes.
inline TensorPtr from_blob(
    void* data,
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type,
    std::function<void(void*)>&& deleter,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return make_tensor_ptr(
      std::move(sizes), data, {}, {}, type, dynamism, std::move(deleter));
}

inline TensorPtr from_blob(
    void* data,
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type,
    std::function<void(void*)>&& deleter,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return make_tensor_ptr(std::move(sizes),
                         data,
                         {},
                         std::move(strides),
                         type,
                         dynamism,
                         std::move(deleter));
}

// An uninitialized (zero-filled) tensor laid out with `strides`.
TensorPtr empty_strided(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

inline TensorPtr empty(
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return empty_strided(std::move(sizes), {}, type, dynamism);
}

// A tensor with the sizes and layout of `other`; `type` Undefined keeps
// other's dtype.
TensorPtr empty_like(
    const TensorPtr& other,
    ::executorch::aten::ScalarType type =
        ::executorch::aten::ScalarType::Undefined,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

// Every element `fill_value`, converted to `type` as static_cast would.
TensorPtr full_strided(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::Scalar fill_value,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

inline TensorPtr full(
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::Scalar fill_value,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return full_strided(std::move(sizes), {}, fill_value, type, dynamism);
}

TensorPtr full_like(const TensorPtr& other,
                    ::executorch::aten::Scalar fill_value,
                    ::executorch::aten::ScalarType type =
                        ::executorch::aten::ScalarType::Undefined,
                    ::executorch::aten::TensorShapeDynamism dynamism =
                        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

// A 0-dimensional tensor holding `value`.
inline TensorPtr scalar_tensor(
    ::executorch::aten::Scalar value,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return full({}, value, type, dynamism);
}

inline TensorPtr zeros(
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return full(std::move(sizes), 0, type, dynamism);
}

inline TensorPtr zeros_like(
    const TensorPtr& other,
    ::executorch::aten::ScalarType type =
        ::executorch::aten::ScalarType::Undefined,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return full_like(other, 0, type, dynamism);
}

inline TensorPtr ones(
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return full(std::move(sizes), 1, type, dynamism);
}

inline TensorPtr ones_like(
    const TensorPtr& other,
    ::executorch::aten::ScalarType type =
        ::executorch::aten::ScalarType::Undefined,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return full_like(other, 1, type, dynamism);
}

// Uniform in [0, 1).
TensorPtr rand_strided(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

inline TensorPtr rand(
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return rand_strided(std::move(sizes), {}, type, dynamism);
}

TensorPtr rand_like(const TensorPtr& other,
                    ::executorch::aten::ScalarType type =
                        ::executorch::aten::ScalarType::Undefined,
                    ::executorch::aten::TensorShapeDynamism dynamism =
                        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

// Standard normal.
TensorPtr randn_strided(
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

inline TensorPtr randn(
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Float,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return randn_strided(std::move(sizes), {}, type, dynamism);
}

TensorPtr randn_like(
    const TensorPtr& other,
    ::executorch::aten::ScalarType type =
        ::executorch::aten::ScalarType::Undefined,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

// Integers uniform in [low, high).
TensorPtr randint_strided(
    int64_t low,
    int64_t high,
    std::vector<::executorch::aten::SizesType> sizes,
    std::vector<::executorch::aten::StridesType> strides,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Int,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

inline TensorPtr randint(
    int64_t low,
    int64_t high,
    std::vector<::executorch::aten::SizesType> sizes,
    ::executorch::aten::ScalarType type = ::executorch::aten::ScalarType::Int,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND) {
  return randint_strided(low, high, std::move(sizes), {}, type, dynamism);
}

TensorPtr randint_like(
    const TensorPtr& other,
    int64_t low,
    int64_t high,
    ::executorch::aten::ScalarType type =
        ::executorch::aten::ScalarType::Undefined,
    ::executorch::aten::TensorShapeDynamism dynamism =
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);

} // namespace extension
} // namespace executorch
