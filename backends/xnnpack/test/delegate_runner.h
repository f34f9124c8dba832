#pragma once

// Test helper: runs a blob through XnnpackBackend directly (init, execute,
// destroy) on TensorPtr arguments.

#include <cstdint>
#include <utility>
#include <vector>

#include <executorch/backends/xnnpack/runtime/xnnpack_backend.h>
#include <executorch/extension/tensor/tensor.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

using ::executorch::extension::TensorPtr;

// A float input of `sizes` holding `values`.
inline TensorPtr input_tensor(std::vector<int32_t> sizes,
                              std::vector<float> values) {
  return extension::make_tensor_ptr(std::move(sizes),
                                    std::move(values),
                                    {},
                                    {},
                                    ::executorch::aten::ScalarType::Float,
                                    runtime::TensorShapeDynamism::STATIC);
}

// A zero-filled float output of `sizes`. DYNAMIC_BOUND lets the delegate
// resize it within `sizes`' element count, as a method plans a dynamic
// program's outputs.
inline TensorPtr output_tensor(std::vector<int32_t> sizes,
                               runtime::TensorShapeDynamism dynamism =
                                   runtime::TensorShapeDynamism::STATIC) {
  return extension::empty(
      std::move(sizes), ::executorch::aten::ScalarType::Float, dynamism);
}

// A float tensor's current sizes and values.
inline std::vector<int32_t> sizes_of(const TensorPtr& t) {
  return std::vector<int32_t>(t->sizes().begin(), t->sizes().end());
}

inline std::vector<float> values_of(const TensorPtr& t) {
  const float* data = t->const_data_ptr<float>();
  return std::vector<float>(data, data + t->numel());
}

class DelegateRunner {
 public:
  DelegateRunner() : pool_(kPoolBytes), allocator_(kPoolBytes, pool_.data()) {}
  ~DelegateRunner() {
    if (handle_ != nullptr) {
      backend_.destroy(handle_);
    }
  }

  // Keeps `blob` alive for the delegate's lifetime, as the runtime does.
  // `named_data` (may be null) serves the blob's named constants.
  runtime::Error init(std::vector<uint8_t> blob,
                      std::vector<runtime::CompileSpec> specs = {},
                      const runtime::NamedDataMap* named_data = nullptr) {
    blob_ = std::move(blob);
    return init_at(blob_.data(), blob_.size(), std::move(specs), named_data);
  }

  // The blob's `size` bytes at `data` (any address), which the caller keeps
  // alive for the delegate's lifetime.
  runtime::Error init_at(const void* data,
                         size_t size,
                         std::vector<runtime::CompileSpec> specs = {},
                         const runtime::NamedDataMap* named_data = nullptr) {
    runtime::FreeableBuffer buffer(data, size, nullptr);
    runtime::BackendInitContext context(&allocator_,
                                        /*event_tracer=*/nullptr,
                                        /*method_name=*/nullptr,
                                        named_data);
    runtime::Result<runtime::DelegateHandle*> handle = backend_.init(
        context,
        &buffer,
        runtime::ArrayRef<runtime::CompileSpec>(specs.data(), specs.size()));
    if (!handle.ok()) {
      return handle.error();
    }
    handle_ = *handle;
    return runtime::Error::Ok;
  }

  // Runs with `inputs` then `outputs` as the delegate's args; the outputs
  // hold the results (and, if DYNAMIC_BOUND, their new sizes) on success.
  runtime::Error run(const std::vector<TensorPtr>& inputs,
                     const std::vector<TensorPtr>& outputs) {
    std::vector<runtime::EValue> values;
    for (const TensorPtr& t : inputs) {
      values.emplace_back(*t);
    }
    for (const TensorPtr& t : outputs) {
      values.emplace_back(*t);
    }
    std::vector<runtime::EValue*> args;
    for (auto& v : values) {
      args.push_back(&v);
    }
    return execute(runtime::Span<runtime::EValue*>(args.data(), args.size()));
  }

  runtime::Error execute(runtime::Span<runtime::EValue*> args) {
    runtime::BackendExecutionContext context;
    return backend_.execute(context, handle_, args);
  }

 private:
  static constexpr size_t kPoolBytes = 64 * 1024;
  XnnpackBackend backend_;
  std::vector<uint8_t> blob_;
  std::vector<uint8_t> pool_;
  runtime::MemoryAllocator allocator_;
  runtime::DelegateHandle* handle_ = nullptr;
};

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
