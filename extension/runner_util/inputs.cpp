#include <executorch/extension/runner_util/inputs.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <executorch/extension/tensor/tensor_ptr_maker.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

using ::executorch::aten::DimOrderType;
using ::executorch::aten::ScalarType;
using ::executorch::aten::SizesType;
using ::executorch::aten::StridesType;
using ::executorch::aten::Tensor;
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

std::string describe(ScalarType type, const std::vector<SizesType>& sizes) {
  std::string text = ::executorch::runtime::toString(type);
  text += "[";
  for (size_t d = 0; d < sizes.size(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(sizes[d]);
  }
  return text + "]";
}

// The dtypes a tensor of ones can be made of.
bool has_one(ScalarType type) {
  return ::executorch::runtime::isFloatingType(type) ||
      ::executorch::runtime::isIntegralType(type, /*include_bool=*/true);
}

} // namespace

std::string describe_tensor(const Tensor& tensor) {
  return describe(
      tensor.scalar_type(),
      std::vector<SizesType>(tensor.sizes().begin(), tensor.sizes().end()));
}

Result<TensorPtr> make_input_tensor(const MethodMeta& meta,
                                    size_t index,
                                    const InputTensorSource& source) {
  Result<Tag> tag = meta.input_tag(index);
  if (!tag.ok()) {
    return tag.error();
  }
  ET_CHECK_OR_RETURN_ERROR(*tag == Tag::Tensor,
                           InvalidArgument,
                           "Method '%s' input %zu is a %s, not a tensor",
                           meta.name(),
                           index,
                           ::executorch::runtime::tag_to_string(*tag));
  Result<TensorInfo> info = meta.input_tensor_meta(index);
  if (!info.ok()) {
    return info.error();
  }
  const ScalarType type = info->scalar_type();
  std::vector<SizesType> sizes(info->sizes().begin(), info->sizes().end());
  if (source.sizes) {
    ET_CHECK_OR_RETURN_ERROR(source.sizes->size() == sizes.size(),
                             InvalidArgument,
                             "Method '%s' input %zu: %zu sizes given, the "
                             "input has rank %zu (declared %s)",
                             meta.name(),
                             index,
                             source.sizes->size(),
                             sizes.size(),
                             describe(type, sizes).c_str());
    sizes = *source.sizes;
  }
  const std::string what = describe(type, sizes);
  std::vector<DimOrderType> dim_order(info->dim_order().begin(),
                                      info->dim_order().end());
  std::vector<StridesType> strides(sizes.size());
  ET_CHECK_OR_RETURN_ERROR(
      sizes.empty() ||
          ::executorch::runtime::dim_order_to_stride(sizes.data(),
                                                     dim_order.data(),
                                                     sizes.size(),
                                                     strides.data()) ==
              Error::Ok,
      InvalidProgram,
      "Method '%s' input %zu (%s) has an invalid dim order",
      meta.name(),
      index,
      what.c_str());
  size_t numel = 1;
  for (const SizesType size : sizes) {
    numel *= static_cast<size_t>(size);
  }
  const size_t nbytes =
      numel * ::executorch::runtime::etensor::elementSize(type);

  std::vector<uint8_t> data;
  std::string origin;
  if (source.file) {
    std::ifstream file(*source.file, std::ios::binary);
    ET_CHECK_OR_RETURN_ERROR(file.good(),
                             AccessFailed,
                             "Method '%s' input %zu (%s): cannot open input "
                             "file '%s'",
                             meta.name(),
                             index,
                             what.c_str(),
                             source.file->c_str());
    data.assign(std::istreambuf_iterator<char>(file),
                std::istreambuf_iterator<char>());
    origin = " from '" + *source.file + "'";
  } else if (source.bytes) {
    const auto* first = static_cast<const uint8_t*>(source.bytes->first);
    data.assign(first, first + source.bytes->second);
  } else {
    ET_CHECK_OR_RETURN_ERROR(has_one(type),
                             NotSupported,
                             "Method '%s' input %zu (%s): cannot fill dtype "
                             "%s with ones; give its bytes",
                             meta.name(),
                             index,
                             what.c_str(),
                             ::executorch::runtime::toString(type));
    return full_strided(std::move(sizes), std::move(strides), 1, type);
  }
  ET_CHECK_OR_RETURN_ERROR(data.size() == nbytes,
                           InvalidArgument,
                           "Method '%s' input %zu (%s)%s: expected %zu bytes, "
                           "the %s has %zu",
                           meta.name(),
                           index,
                           what.c_str(),
                           origin.c_str(),
                           nbytes,
                           source.file ? "file" : "given buffer",
                           data.size());
  return make_tensor_ptr(std::move(sizes),
                         std::move(data),
                         std::move(dim_order),
                         std::move(strides),
                         type);
}

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
    InputTensorSource source;
    if (i < input_buffers.size()) {
      source.bytes = input_buffers[i];
    }
    Result<TensorPtr> input = make_input_tensor(meta, i, source);
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
