#pragma once

// Input tensors for a method that tools (the runner, benchmarks, smoke
// tests) make from its MethodMeta without knowing the model: each tensor
// input gets its declared dtype and dim order, its declared sizes or sizes
// the caller picks within the bounds of a dynamic shape, and ones or the
// bytes of a caller-given buffer or file.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/method_meta.h>

namespace executorch {
namespace extension {

// Where the sizes and contents of one tensor input come from.
struct InputTensorSource {
  // Sizes instead of the declared ones (which are the upper bounds of a
  // dynamic shape); their count must be the input's rank.
  std::optional<std::vector<::executorch::aten::SizesType>> sizes;
  // Raw bytes of the tensor, little-endian elements in the input's dim order
  // (row-major for ordinary tensors), taken from a file or from a buffer
  // (copied); their count must be the tensor's nbytes. Neither: ones.
  std::optional<std::string> file;
  std::optional<std::pair<const void*, size_t>> bytes;
};

// Tensor input `index` of the method `meta` describes, made as `source`
// says. Errors are logged naming the method, the input, its dtype and sizes
// and, for a wrong byte count, the expected and actual counts:
// InvalidArgument for a wrong rank, byte count or a non-tensor input,
// AccessFailed for an unreadable file, NotSupported for ones of a dtype
// without a one (pass bytes), InvalidProgram for a bad declared dim order.
ET_NODISCARD ::executorch::runtime::Result<TensorPtr> make_input_tensor(
    const ::executorch::runtime::MethodMeta& meta,
    size_t index,
    const InputTensorSource& source = {});

// "Float[2, 3]": how messages name a tensor's dtype and sizes.
std::string describe_tensor(const ::executorch::aten::Tensor& tensor);

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

// Sets every tensor input of `method` to make_input_tensor()'s tensor at
// its declared sizes: ones, or, when `input_buffers` has an entry i, those
// bytes. Inputs that are not tensors keep their values.
ET_NODISCARD ::executorch::runtime::Result<BufferCleanup> prepare_input_tensors(
    ::executorch::runtime::Method& method,
    PrepareInputTensorsOptions options = {},
    const std::vector<std::pair<char*, size_t>>& input_buffers = {});

} // namespace extension
} // namespace executorch
