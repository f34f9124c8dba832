#include <executorch/runtime/backend/interface.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

namespace {

// Fixed-size table: no heap. Filled at start-up, read when methods load.
Backend registered_backends[ET_MAX_REGISTERED_BACKENDS];
size_t num_registered_backends = 0;

} // namespace

BackendInterface::~BackendInterface() {}

Error register_backend(const Backend& backend) {
  ET_CHECK_OR_RETURN_ERROR(
      backend.name != nullptr && backend.backend != nullptr,
      InvalidArgument,
      "register_backend: a backend needs a name and an implementation");
  ET_CHECK_OR_RETURN_ERROR(get_backend_class(backend.name) == nullptr,
                           RegistrationAlreadyRegistered,
                           "Backend '%s' is already registered",
                           backend.name);
  ET_CHECK_OR_RETURN_ERROR(
      num_registered_backends < ET_MAX_REGISTERED_BACKENDS,
      RegistrationExceedingMaxKernels,
      "Cannot register backend '%s': the table of %d backends is full "
      "(raise ET_MAX_REGISTERED_BACKENDS)",
      backend.name,
      ET_MAX_REGISTERED_BACKENDS);
  registered_backends[num_registered_backends++] = backend;
  return Error::Ok;
}

BackendInterface* get_backend_class(const char* name) {
  if (name == nullptr) {
    return nullptr;
  }
  for (size_t i = 0; i < num_registered_backends; ++i) {
    if (std::strcmp(registered_backends[i].name, name) == 0) {
      return registered_backends[i].backend;
    }
  }
  return nullptr;
}

size_t get_num_registered_backends() {
  return num_registered_backends;
}

Result<const char*> get_backend_name(size_t index) {
  ET_CHECK_OR_RETURN_ERROR(index < num_registered_backends,
                           InvalidArgument,
                           "Backend index %zu out of range: %zu registered",
                           index,
                           num_registered_backends);
  return registered_backends[index].name;
}

} // namespace runtime
} // namespace executorch
