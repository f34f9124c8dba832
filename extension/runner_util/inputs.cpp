#include <executorch/extension/runner_util/inputs.h>

#include <cstring>

#include <executorch/extension/tensor/tensor_ptr_maker.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

using ::executorch::aten::DimOrderType;
using ::executorch::aten::SizesType;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Method;
using ::executorch::runtime::MethodMeta;
using ::executorch::runtime::Result;
using ::executorch::runtime::Tag;
using ::executorch::runtime::TensorInfo;

namespace executorch {
namespace extension {

namespace {

// A tensor shaped and laid out as `info` declares, holding `bytes` (copied)
// or, when `bytes` is null, ones.
Result<TensorPtr> make_input(const MethodMeta& meta,
                             size_t index,
                             const TensorInfo& info,
                             const std::pair<char*, size_t>* bytes) {
  const auto type = info.scalar_type();
  TensorPtr tensor = make_tensor_ptr(
      std::vector<SizesType>(info.sizes().begin(), info.sizes().end()),
      std::vector<uint8_t>(info.nbytes()),
      std::vector<DimOrderType>(info.dim_order().begin(),
                                info.dim_order().end()),
      {},
      type);
  if (bytes != nullptr) {
    ET_CHECK_OR_RETURN_ERROR(bytes->second == info.nbytes(),
                             InvalidArgument,
                             "Method '%s' input %zu: expected %zu bytes, the "
                             "given buffer has %zu",
                             meta.name(),
                             index,
                             info.nbytes(),
                             bytes->second);
    if (bytes->second > 0) {
      std::memcpy(tensor->mutable_data_ptr(), bytes->first, bytes->second);
    }
    return tensor;
  }
  ET_CHECK_OR_RETURN_ERROR(
      ::executorch::runtime::isFloatingType(type) ||
          ::executorch::runtime::isIntegralType(type, /*include_bool=*/true),
      NotSupported,
      "Method '%s' input %zu: cannot fill dtype %s with ones",
      meta.name(),
      index,
      ::executorch::runtime::toString(type));
  return ones_like(tensor);
}

} // namespace

Result<BufferCleanup> prepare_input_tensors(
    Method& method,
    PrepareInputTensorsOptions options,
    const std::vector<std::pair<char*, size_t>>& input_buffers) {
  const MethodMeta meta = method.method_meta();
  const size_t num_inputs = meta.num_inputs();
  ET_CHECK_OR_RETURN_ERROR(num_inputs <= options.max_inputs,
                           NotSupported,
                           "Method '%s' has %zu inputs, more than the %zu "
                           "allowed",
                           meta.name(),
                           num_inputs,
                           options.max_inputs);
  std::vector<TensorPtr> inputs;
  size_t total = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    Result<Tag> tag = meta.input_tag(i);
    if (!tag.ok()) {
      return tag.error();
    }
    if (*tag != Tag::Tensor) {
      continue;
    }
    Result<TensorInfo> info = meta.input_tensor_meta(i);
    if (!info.ok()) {
      return info.error();
    }
    ET_CHECK_OR_RETURN_ERROR(
        info->nbytes() <= options.max_total_allocation_size - total,
        NotSupported,
        "Method '%s' input %zu: %zu more bytes exceed the allocation limit "
        "of %zu",
        meta.name(),
        i,
        info->nbytes(),
        options.max_total_allocation_size);
    total += info->nbytes();
    Result<TensorPtr> input = make_input(
        meta, i, *info, i < input_buffers.size() ? &input_buffers[i] : nullptr);
    if (!input.ok()) {
      return input.error();
    }
    ET_CHECK_OK_OR_RETURN_ERROR(method.set_input(EValue(**input), i));
    inputs.push_back(std::move(*input));
  }
  return BufferCleanup(std::move(inputs));
}

} // namespace extension
} // namespace executorch
