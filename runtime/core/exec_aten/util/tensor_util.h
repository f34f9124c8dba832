#pragma once

// Tensor helpers shared by the runtime and kernels.

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch {
namespace runtime {

// Resizes `t` to `new_sizes` within what its shape dynamism and planned
// capacity allow (see TensorImpl::internal_resize_contiguous).
ET_NODISCARD inline Error resize_tensor(
    ::executorch::aten::Tensor t,
    ArrayRef<::executorch::aten::SizesType> new_sizes) {
  return t.unsafeGetTensorImpl()->internal_resize_contiguous(new_sizes);
}

// Overload for sizes computed as int64 (as kernels often do).
ET_NODISCARD inline Error resize_tensor(::executorch::aten::Tensor t,
                                        ArrayRef<int64_t> new_sizes) {
  constexpr size_t kMaxDim = 16;
  ET_CHECK_OR_RETURN_ERROR(new_sizes.size() <= kMaxDim,
                           NotSupported,
                           "Rank %zu exceeds the supported maximum of %zu",
                           new_sizes.size(),
                           kMaxDim);
  ::executorch::aten::SizesType sizes[kMaxDim];
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    sizes[i] = static_cast<::executorch::aten::SizesType>(new_sizes[i]);
  }
  return resize_tensor(
      t, ArrayRef<::executorch::aten::SizesType>(sizes, new_sizes.size()));
}

inline bool tensor_is_contiguous(const ::executorch::aten::Tensor& t) {
  return is_contiguous_dim_order(t.dim_order().data(), t.dim_order().size());
}

} // namespace runtime
} // namespace executorch
