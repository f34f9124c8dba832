#include <executorch/runtime/kernel/operator_registry.h>

#include <cstdio>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

namespace {

Kernel registered_kernels[ET_MAX_REGISTERED_KERNELS];
size_t num_registered_kernels = 0;

bool same_kernel(const Kernel& a, const Kernel& b) {
  return std::strcmp(a.name_, b.name_) == 0 && a.kernel_key_ == b.kernel_key_;
}

const Kernel* find_kernel(const char* name, const char* key) {
  const Kernel* fallback = nullptr;
  for (size_t i = 0; i < num_registered_kernels; ++i) {
    const Kernel& kernel = registered_kernels[i];
    if (std::strcmp(kernel.name_, name) != 0) {
      continue;
    }
    if (kernel.kernel_key_.is_fallback()) {
      fallback = &kernel;
    } else if (key != nullptr &&
               std::strcmp(kernel.kernel_key_.data(), key) == 0) {
      return &kernel;
    }
  }
  return fallback;
}

// Longest key we build: 16 tensor arguments of rank 16.
constexpr size_t kMaxKeyLength = 16 * (4 + 16 * 3) + 8;

} // namespace

Error register_kernels(const Span<const Kernel> kernels) {
  ET_CHECK_OR_RETURN_ERROR(
      num_registered_kernels + kernels.size() <= ET_MAX_REGISTERED_KERNELS,
      RegistrationExceedingMaxKernels,
      "Registering %zu kernels would exceed the limit of %d "
      "(raise ET_MAX_REGISTERED_KERNELS)",
      kernels.size(),
      ET_MAX_REGISTERED_KERNELS);
  for (size_t i = 0; i < kernels.size(); ++i) {
    ET_CHECK_OR_RETURN_ERROR(
        kernels[i].name_ != nullptr && kernels[i].op_ != nullptr,
        InvalidArgument,
        "Kernel %zu has no name or no function",
        i);
    for (size_t j = 0; j < num_registered_kernels; ++j) {
      ET_CHECK_OR_RETURN_ERROR(!same_kernel(registered_kernels[j], kernels[i]),
                               RegistrationAlreadyRegistered,
                               "Kernel '%s' (key '%s') is already registered",
                               kernels[i].name_,
                               kernels[i].kernel_key_.is_fallback()
                                   ? "fallback"
                                   : kernels[i].kernel_key_.data());
    }
    for (size_t j = 0; j < i; ++j) {
      ET_CHECK_OR_RETURN_ERROR(!same_kernel(kernels[j], kernels[i]),
                               RegistrationAlreadyRegistered,
                               "Kernel '%s' appears twice in one registration",
                               kernels[i].name_);
    }
  }
  for (const Kernel& kernel : kernels) {
    registered_kernels[num_registered_kernels++] = kernel;
  }
  return Error::Ok;
}

Error make_kernel_key_string(Span<const TensorMeta> meta_list,
                             char* buffer,
                             size_t buffer_size) {
  size_t used = 0;
  auto append = [&](const char* text) -> bool {
    const size_t length = std::strlen(text);
    if (used + length + 1 > buffer_size) {
      return false;
    }
    std::memcpy(buffer + used, text, length);
    used += length;
    buffer[used] = '\0';
    return true;
  };
  ET_CHECK_OR_RETURN_ERROR(
      buffer_size > 0, InvalidArgument, "Empty key buffer");
  buffer[0] = '\0';
  bool fits = append("v1/");
  char number[8];
  for (size_t i = 0; i < meta_list.size() && fits; ++i) {
    if (i > 0) {
      fits = fits && append("|");
    }
    std::snprintf(
        number, sizeof(number), "%d", static_cast<int>(meta_list[i].dtype_));
    fits = fits && append(number) && append(";");
    for (size_t d = 0; d < meta_list[i].dim_order_.size() && fits; ++d) {
      if (d > 0) {
        fits = fits && append(",");
      }
      std::snprintf(number,
                    sizeof(number),
                    "%d",
                    static_cast<int>(meta_list[i].dim_order_[d]));
      fits = fits && append(number);
    }
  }
  ET_CHECK_OR_RETURN_ERROR(fits,
                           InvalidArgument,
                           "Kernel key does not fit in %zu bytes",
                           buffer_size);
  return Error::Ok;
}

Result<OpFunction> get_op_function_from_registry(
    const char* name, Span<const TensorMeta> meta_list) {
  char key[kMaxKeyLength];
  const char* key_ptr = nullptr;
  if (!meta_list.empty() &&
      make_kernel_key_string(meta_list, key, sizeof(key)) == Error::Ok) {
    key_ptr = key;
  }
  const Kernel* kernel = find_kernel(name, key_ptr);
  if (kernel == nullptr) {
    return Error::OperatorMissing;
  }
  return kernel->op_;
}

bool registry_has_op_function(const char* name,
                              Span<const TensorMeta> meta_list) {
  return get_op_function_from_registry(name, meta_list).ok();
}

Span<const Kernel> get_registered_kernels() {
  return Span<const Kernel>(registered_kernels, num_registered_kernels);
}

} // namespace runtime
} // namespace executorch
