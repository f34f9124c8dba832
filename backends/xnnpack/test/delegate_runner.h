#pragma once

// Test helper: runs a blob through XnnpackBackend directly (init, execute,
// destroy) with float tensors given as sizes and values.

#include <cstdint>
#include <memory>
#include <vector>

#include <executorch/backends/xnnpack/runtime/xnnpack_backend.h>
#include <executorch/runtime/testing/owned_tensor.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

struct HostTensor {
  std::vector<int32_t> sizes;
  std::vector<float> data;
};

class DelegateRunner {
 public:
  DelegateRunner() : pool_(kPoolBytes), allocator_(kPoolBytes, pool_.data()) {}
  ~DelegateRunner() {
    if (handle_ != nullptr) {
      backend_.destroy(handle_);
    }
  }

  // Keeps `blob` alive for the delegate's lifetime, as the runtime does.
  runtime::Error init(std::vector<uint8_t> blob,
                      std::vector<runtime::CompileSpec> specs = {}) {
    blob_ = std::move(blob);
    runtime::FreeableBuffer buffer(blob_.data(), blob_.size(), nullptr);
    runtime::BackendInitContext context(&allocator_);
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

  // Runs with `inputs`; `outputs` give the output tensors' sizes on entry
  // and hold their sizes and values on success. With `dynamic_outputs`
  // the output tensors are DYNAMIC_BOUND, their sizes on entry the bound,
  // as a method plans a dynamic program's outputs.
  runtime::Error run(const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>* outputs,
                     bool dynamic_outputs = false) {
    std::vector<std::unique_ptr<runtime::testing::OwnedTensor>> tensors;
    for (const HostTensor& t : inputs) {
      tensors.push_back(std::make_unique<runtime::testing::OwnedTensor>(
          ::executorch::aten::ScalarType::Float, t.sizes, t.data));
    }
    for (const HostTensor& t : *outputs) {
      size_t numel = 1;
      for (int32_t s : t.sizes) {
        numel *= static_cast<size_t>(s);
      }
      tensors.push_back(std::make_unique<runtime::testing::OwnedTensor>(
          ::executorch::aten::ScalarType::Float,
          t.sizes,
          std::vector<float>(numel, 0.0f),
          dynamic_outputs ? runtime::TensorShapeDynamism::DYNAMIC_BOUND
                          : runtime::TensorShapeDynamism::STATIC));
    }
    std::vector<runtime::EValue> values;
    for (auto& t : tensors) {
      values.emplace_back(t->tensor());
    }
    std::vector<runtime::EValue*> args;
    for (auto& v : values) {
      args.push_back(&v);
    }
    const runtime::Error error =
        execute(runtime::Span<runtime::EValue*>(args.data(), args.size()));
    if (error != runtime::Error::Ok) {
      return error;
    }
    for (size_t j = 0; j < outputs->size(); ++j) {
      const auto t = tensors[inputs.size() + j]->tensor();
      const float* data = t.const_data_ptr<float>();
      (*outputs)[j].sizes.assign(t.sizes().begin(), t.sizes().end());
      (*outputs)[j].data.assign(data, data + t.numel());
    }
    return runtime::Error::Ok;
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
