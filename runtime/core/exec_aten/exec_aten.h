#pragma once

// The tensor vocabulary kernels are written in, under the names ExecuTorch
// kernels use (executorch::aten::Tensor, ScalarType, IntArrayRef, ...).

#include <optional>
#include <string_view>

#include <executorch/runtime/core/array_ref.h>
#include <executorch/runtime/core/portable_type/half.h>
#include <executorch/runtime/core/portable_type/scalar.h>
#include <executorch/runtime/core/portable_type/scalar_type.h>
#include <executorch/runtime/core/portable_type/tensor.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/core/tensor_shape_dynamism.h>

namespace executorch {
namespace aten {

using Tensor = ::executorch::runtime::etensor::Tensor;
using TensorImpl = ::executorch::runtime::etensor::TensorImpl;
using ScalarType = ::executorch::runtime::etensor::ScalarType;
using Scalar = ::executorch::runtime::etensor::Scalar;
using Half = ::executorch::runtime::etensor::Half;
using BFloat16 = ::executorch::runtime::etensor::BFloat16;
using SizesType = TensorImpl::SizesType;
using DimOrderType = TensorImpl::DimOrderType;
using StridesType = TensorImpl::StridesType;
using TensorShapeDynamism = ::executorch::runtime::TensorShapeDynamism;
template <typename T>
using ArrayRef = ::executorch::runtime::ArrayRef<T>;
using IntArrayRef = ArrayRef<int64_t>;
template <typename T>
using optional = std::optional<T>;
using nullopt_t = std::nullopt_t;
inline constexpr std::nullopt_t nullopt = std::nullopt;
using string_view = std::string_view;

} // namespace aten
} // namespace executorch

// Older spelling still used by many kernels.
namespace exec_aten = ::executorch::aten;
