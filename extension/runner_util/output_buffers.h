#pragma once

// Storage for the tensor outputs of a method that memory planning left
// without a buffer (programs exported with graph outputs unplanned expect the
// caller to provide it). Hosted tools and bindings use heap buffers sized to
// each output's declared upper bound.

#include <cstdint>
#include <vector>

#include <executorch/runtime/executor/method.h>

namespace executorch {
namespace extension {

// Gives every tensor output of `method` that has no data a heap buffer, kept
// in `storage` (which must outlive the method's runs). Outputs that already
// have data (constant, or aliasing an input) or are memory planned (even
// when empty, so without data) are left alone.
ET_NODISCARD inline ::executorch::runtime::Error allocate_unplanned_outputs(
    ::executorch::runtime::Method& method,
    std::vector<std::vector<uint8_t>>& storage) {
  for (size_t i = 0; i < method.outputs_size(); ++i) {
    const ::executorch::runtime::EValue& output = method.get_output(i);
    if (!output.isTensor() || output.toTensor().const_data_ptr() != nullptr) {
      continue;
    }
    // An empty planned output has no data pointer but needs none.
    auto info = method.method_meta().output_tensor_meta(i);
    if (info.ok() && info->is_memory_planned()) {
      continue;
    }
    // At least one byte, so that even an empty output gets a real pointer.
    const size_t nbytes = output.toTensor().nbytes();
    storage.emplace_back(nbytes == 0 ? 1 : nbytes);
    ET_CHECK_OK_OR_RETURN_ERROR(method.set_output_data_ptr(
        storage.back().data(), storage.back().size(), i));
  }
  return ::executorch::runtime::Error::Ok;
}

} // namespace extension
} // namespace executorch
