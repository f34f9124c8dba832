#pragma once

// Test helper: a contiguous tensor that owns its metadata and data, for
// passing inputs to a Method.

#include <cstdint>
#include <cstring>
#include <vector>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>

namespace executorch {
namespace runtime {
namespace testing {

class OwnedTensor {
 public:
  // DYNAMIC_BOUND `dynamism` lets a kernel or delegate resize the tensor
  // within `values.size()` elements.
  template <typename T>
  OwnedTensor(::executorch::aten::ScalarType dtype,
              std::vector<int32_t> sizes,
              const std::vector<T>& values,
              ::executorch::aten::TensorShapeDynamism dynamism =
                  ::executorch::aten::TensorShapeDynamism::STATIC)
      : sizes_(std::move(sizes)),
        dim_order_(sizes_.size()),
        strides_(sizes_.size()),
        data_(values.size() * sizeof(T)),
        impl_(dtype,
              static_cast<ssize_t>(sizes_.size()),
              sizes_.data(),
              data_.data(),
              dim_order_.data(),
              strides_.data(),
              dynamism) {
    for (size_t d = 0; d < dim_order_.size(); ++d) {
      dim_order_[d] = static_cast<uint8_t>(d);
    }
    (void)dim_order_to_stride(
        sizes_.data(), dim_order_.data(), sizes_.size(), strides_.data());
    // An empty tensor's vectors may have null data (memcpy's pointers must
    // not be null, even for 0 bytes).
    if (!data_.empty()) {
      std::memcpy(data_.data(), values.data(), data_.size());
    }
  }

  OwnedTensor(const OwnedTensor&) = delete;
  OwnedTensor& operator=(const OwnedTensor&) = delete;

  ::executorch::aten::Tensor tensor() {
    return ::executorch::aten::Tensor(&impl_);
  }

 private:
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  std::vector<int32_t> strides_;
  std::vector<uint8_t> data_;
  ::executorch::aten::TensorImpl impl_;
};

// A float tensor of `sizes` holding `values`.
inline OwnedTensor float_tensor(std::vector<int32_t> sizes,
                                const std::vector<float>& values) {
  return OwnedTensor(
      ::executorch::aten::ScalarType::Float, std::move(sizes), values);
}

} // namespace testing
} // namespace runtime
} // namespace executorch
