#pragma once

// TensorLayout: the dtype, sizes and dim order of a tensor whose bytes live
// elsewhere (in a NamedDataMap). It does not own its sizes and dim order:
// they stay valid as long as the data map that returned the layout.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>

namespace executorch {
namespace runtime {

class TensorLayout final {
 public:
  TensorLayout() = delete;

  // Checks that `dim_order` is a permutation of the dims, every size is
  // non-negative and the byte count fits a size_t. Errors: InvalidArgument.
  static Result<const TensorLayout> create(
      Span<const int32_t> sizes,
      Span<const uint8_t> dim_order,
      executorch::aten::ScalarType scalar_type);

  Span<const int32_t> sizes() const {
    return sizes_;
  }
  Span<const uint8_t> dim_order() const {
    return dim_order_;
  }
  executorch::aten::ScalarType scalar_type() const {
    return scalar_type_;
  }
  // Bytes of the tensor's data.
  size_t nbytes() const {
    return nbytes_;
  }

 private:
  TensorLayout(Span<const int32_t> sizes,
               Span<const uint8_t> dim_order,
               executorch::aten::ScalarType scalar_type,
               size_t nbytes)
      : sizes_(sizes),
        dim_order_(dim_order),
        scalar_type_(scalar_type),
        nbytes_(nbytes) {}

  const Span<const int32_t> sizes_;
  const Span<const uint8_t> dim_order_;
  const executorch::aten::ScalarType scalar_type_;
  const size_t nbytes_;
};

} // namespace runtime
} // namespace executorch
