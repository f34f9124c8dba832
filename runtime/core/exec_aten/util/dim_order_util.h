#pragma once

// Conversions between dim orders and strides.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/platform/compiler.h>

namespace executorch {
namespace runtime {

// True when dim_order is 0, 1, ..., dims-1.
template <typename DimOrderType>
bool is_contiguous_dim_order(const DimOrderType* dim_order, size_t dims) {
  for (size_t i = 0; i < dims; ++i) {
    if (static_cast<size_t>(dim_order[i]) != i) {
      return false;
    }
  }
  return true;
}

// True when dim_order is the channels-last order 0, 2, 3, 1 (rank 4).
template <typename DimOrderType>
bool is_channels_last_dim_order(const DimOrderType* dim_order, size_t dims) {
  return dims == 4 && dim_order[0] == 0 && dim_order[1] == 2 &&
         dim_order[2] == 3 && dim_order[3] == 1;
}

// Fills `strides` for a dense tensor with `sizes` laid out in `dim_order`
// (outermost dimension first). Fails if dim_order is not a permutation or
// a stride does not fit StridesType.
template <typename SizesType, typename DimOrderType, typename StridesType>
ET_NODISCARD Error dim_order_to_stride(const SizesType* sizes,
                                       const DimOrderType* dim_order,
                                       size_t dims,
                                       StridesType* strides) {
  if (dims == 0) {
    return Error::Ok;
  }
  uint64_t seen = 0;
  for (size_t i = 0; i < dims; ++i) {
    const size_t d = static_cast<size_t>(dim_order[i]);
    ET_CHECK_OR_RETURN_ERROR(
        d < dims && d < 64 && !(seen & (uint64_t(1) << d)),
        InvalidArgument,
        "dim_order entry %zu (=%zu) is not a permutation of 0..%zu",
        i,
        d,
        dims - 1);
    seen |= uint64_t(1) << d;
  }
  StridesType stride = 1;
  for (size_t i = dims; i-- > 0;) {
    const size_t d = static_cast<size_t>(dim_order[i]);
    strides[d] = stride;
    if (i == 0) {
      break; // The stride past the outermost dimension is never stored.
    }
    // A zero-sized dimension still gets a stride as if it had size 1.
    const StridesType extent =
        sizes[d] > 0 ? static_cast<StridesType>(sizes[d]) : 1;
    ET_CHECK_OR_RETURN_ERROR(
        !__builtin_mul_overflow(stride, extent, &stride),
        InvalidArgument,
        "strides overflow: dim %zu of size %lld times the inner stride "
        "does not fit the stride type",
        d,
        static_cast<long long>(sizes[d]));
  }
  return Error::Ok;
}

} // namespace runtime
} // namespace executorch
