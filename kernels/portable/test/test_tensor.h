#pragma once

// Test helper: a tensor that owns its sizes, dim order, strides and data,
// with a chosen shape dynamism so kernels can resize it.

#include <cstdint>
#include <cstring>
#include <vector>

#include <executorch/kernels/portable/util/elementwise.h>
#include <executorch/runtime/core/memory_allocator.h>

namespace torch {
namespace executor {
namespace testing {

using ::executorch::aten::Scalar;
using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::Error;
using ::executorch::runtime::KernelRuntimeContext;
using DYN = ::executorch::aten::TensorShapeDynamism;

class TestTensor {
 public:
  // `values` are converted to `dtype` through the elementwise store path.
  template <typename T>
  TestTensor(ScalarType dtype,
             std::vector<int32_t> sizes,
             const std::vector<T>& values,
             ::executorch::aten::TensorShapeDynamism dynamism =
                 ::executorch::aten::TensorShapeDynamism::STATIC,
             std::vector<uint8_t> dim_order = {})
      : sizes_(std::move(sizes)),
        dim_order_(std::move(dim_order)),
        strides_(sizes_.size()),
        // Room for growth when the shape is dynamic.
        data_(64 + (values.size() + 64) * 8),
        impl_(dtype,
              static_cast<ssize_t>(sizes_.size()),
              sizes_.data(),
              data_.data(),
              nullptr,
              nullptr,
              dynamism) {
    if (dim_order_.empty()) {
      for (size_t d = 0; d < sizes_.size(); ++d) {
        dim_order_.push_back(static_cast<uint8_t>(d));
      }
    }
    (void)::executorch::runtime::dim_order_to_stride(
        sizes_.data(), dim_order_.data(), sizes_.size(), strides_.data());
    impl_ = ::executorch::aten::TensorImpl(dtype,
                                           static_cast<ssize_t>(sizes_.size()),
                                           sizes_.data(),
                                           data_.data(),
                                           dim_order_.data(),
                                           strides_.data(),
                                           dynamism);
    // Values are given in memory order.
    native::internal::store_block<T>(values.data(),
                                     reinterpret_cast<char*>(data_.data()),
                                     dtype,
                                     1,
                                     static_cast<int64_t>(values.size()));
  }

  TestTensor(const TestTensor&) = delete;
  TestTensor& operator=(const TestTensor&) = delete;

  Tensor& tensor() {
    tensor_ = Tensor(&impl_);
    return tensor_;
  }
  operator Tensor&() {
    return tensor();
  }

  // The element values in memory order, converted to T.
  template <typename T>
  std::vector<T> values() const {
    std::vector<T> result(static_cast<size_t>(impl_.numel()));
    native::internal::load_block<T>(reinterpret_cast<const char*>(data_.data()),
                                    impl_.scalar_type(),
                                    1,
                                    impl_.numel(),
                                    result.data());
    return result;
  }
  std::vector<int32_t> sizes() const {
    return std::vector<int32_t>(impl_.sizes().begin(), impl_.sizes().end());
  }

 private:
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  std::vector<int32_t> strides_;
  std::vector<uint64_t> data_;
  ::executorch::aten::TensorImpl impl_;
  Tensor tensor_{nullptr};
};

// A context with temp memory, as a Method gives kernels.
class TempContext {
 public:
  TempContext()
      : allocator_(sizeof(buffer_), buffer_), ctx_(nullptr, &allocator_) {}
  KernelRuntimeContext& get() {
    return ctx_;
  }

 private:
  alignas(16) uint8_t buffer_[65536];
  ::executorch::runtime::MemoryAllocator allocator_;
  KernelRuntimeContext ctx_;
};

// An out tensor of `dtype` that kernels may resize to any shape of the
// same rank (up to 64 + 8 * n elements' worth of bytes).
inline std::vector<float> zeros(size_t n) {
  return std::vector<float>(n, 0.0f);
}

} // namespace testing
} // namespace executor
} // namespace torch
