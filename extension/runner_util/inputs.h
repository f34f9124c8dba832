#pragma once

// Fills a loaded method's tensor inputs with placeholder data, sized from
// its MethodMeta, so tools (benchmarks, the runner, smoke tests) can run a
// program without knowing its inputs: every element is 1, or the bytes of a
// caller-given buffer per input.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/method.h>

namespace executorch {
namespace extension {

struct PrepareInputTensorsOptions {
  // Fail (NotSupported) rather than allocate more than this many bytes in
  // all, or prepare more than this many inputs.
  size_t max_total_allocation_size = SIZE_MAX;
  size_t max_inputs = SIZE_MAX;
};

// Owns the input tensors prepare_input_tensors() made. Inputs the method
// did not plan memory for point into their data, so keep it until the
// method has run.
class BufferCleanup final {
 public:
  explicit BufferCleanup(std::vector<TensorPtr>&& inputs)
      : inputs_(std::move(inputs)) {}
  BufferCleanup(BufferCleanup&&) = default;
  BufferCleanup& operator=(BufferCleanup&&) = default;
  BufferCleanup(const BufferCleanup&) = delete;
  BufferCleanup& operator=(const BufferCleanup&) = delete;

 private:
  std::vector<TensorPtr> inputs_;
};

// Sets every tensor input of `method` to a tensor of its declared dtype,
// sizes and dim order. Input i is filled with ones, or, when
// `input_buffers` has an entry i, with those bytes (whose count must be the
// input's nbytes). Inputs that are not tensors keep their values. Errors
// name the input and the expected and actual sizes.
ET_NODISCARD ::executorch::runtime::Result<BufferCleanup> prepare_input_tensors(
    ::executorch::runtime::Method& method,
    PrepareInputTensorsOptions options = {},
    const std::vector<std::pair<char*, size_t>>& input_buffers = {});

} // namespace extension
} // namespace executorch
