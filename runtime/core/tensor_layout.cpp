#include <executorch/runtime/core/tensor_layout.h>

#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

Result<const TensorLayout> TensorLayout::create(
    Span<const int32_t> sizes,
    Span<const uint8_t> dim_order,
    executorch::aten::ScalarType scalar_type) {
  ET_CHECK_OR_RETURN_ERROR(static_cast<int>(scalar_type) >= 0 &&
                               scalar_type < executorch::aten::ScalarType::Undefined,
                           InvalidArgument,
                           "TensorLayout: invalid scalar type %d",
                           static_cast<int>(scalar_type));
  ET_CHECK_OR_RETURN_ERROR(dim_order.size() == sizes.size(),
                           InvalidArgument,
                           "TensorLayout: %zu sizes but %zu dim order entries",
                           sizes.size(),
                           dim_order.size());
  // Each dim appears once in the dim order; at most 64 dims fit the mask.
  ET_CHECK_OR_RETURN_ERROR(sizes.size() <= 64,
                           InvalidArgument,
                           "TensorLayout: rank %zu is above 64",
                           sizes.size());
  uint64_t seen = 0;
  size_t nbytes = etensor::elementSize(scalar_type);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint8_t d = dim_order[i];
    ET_CHECK_OR_RETURN_ERROR(d < sizes.size() && (seen >> d & 1u) == 0,
                             InvalidArgument,
                             "TensorLayout: dim_order[%zu] = %u is not a "
                             "permutation of %zu dims",
                             i,
                             static_cast<unsigned>(d),
                             sizes.size());
    seen |= uint64_t{1} << d;
    ET_CHECK_OR_RETURN_ERROR(sizes[i] >= 0,
                             InvalidArgument,
                             "TensorLayout: size %d at dim %zu",
                             sizes[i],
                             i);
    ET_CHECK_OR_RETURN_ERROR(
        !__builtin_mul_overflow(nbytes, static_cast<size_t>(sizes[i]), &nbytes),
        InvalidArgument,
        "TensorLayout: byte count overflows");
  }
  return TensorLayout(sizes, dim_order, scalar_type, nbytes);
}

} // namespace runtime
} // namespace executorch
