#include <executorch/backends/xnnpack/runtime/xnnpack_backend.h>

#include <cstring>
#include <new>

#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/executor.h>
#include <executorch/backends/xnnpack/runtime/huge_page_allocator.h>
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/backends/xnnpack/runtime/threadpool.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::ArrayRef;
using runtime::BackendExecutionContext;
using runtime::BackendInitContext;
using runtime::CompileSpec;
using runtime::DelegateHandle;
using runtime::Error;
using runtime::EValue;
using runtime::FreeableBuffer;
using runtime::Result;
using runtime::Span;

namespace {

constexpr char kNumThreadsKey[] = "num_threads";

// The "num_threads" compile spec, 0 when absent.
Result<size_t> num_threads_spec(ArrayRef<CompileSpec> specs) {
  for (const CompileSpec& spec : specs) {
    if (spec.key == nullptr || std::strcmp(spec.key, kNumThreadsKey) != 0) {
      continue;
    }
    const size_t n = spec.value.nbytes;
    ET_CHECK_OR_RETURN_ERROR(n >= 1 && n <= 8 && spec.value.buffer != nullptr,
                             InvalidArgument,
                             "XnnpackBackend: compile spec '%s' has %zu bytes, "
                             "expected a 1- to 8-byte integer",
                             kNumThreadsKey,
                             n);
    const auto* bytes = static_cast<const uint8_t*>(spec.value.buffer);
    uint64_t value = 0;
    for (size_t i = n; i-- > 0;) {
      value = (value << 8) | bytes[i];
    }
    ET_CHECK_OR_RETURN_ERROR(value <= 1024,
                             InvalidArgument,
                             "XnnpackBackend: compile spec '%s' = %llu "
                             "threads is too many",
                             kNumThreadsKey,
                             static_cast<unsigned long long>(value));
    return static_cast<size_t>(value);
  }
  return static_cast<size_t>(0);
}

} // namespace

bool XnnpackBackend::is_available() const {
  return initialize_xnnpack() == xnn_status_success;
}

Result<DelegateHandle*> XnnpackBackend::init(
    BackendInitContext& context,
    FreeableBuffer* processed,
    ArrayRef<CompileSpec> compile_specs) const {
  ET_UNWRAP(size_t num_threads, num_threads_spec(compile_specs));
  XnnpackExecutor* executor =
      context.get_runtime_allocator()->allocateInstance<XnnpackExecutor>();
  ET_CHECK_OR_RETURN_ERROR(executor != nullptr,
                           MemoryAllocationFailed,
                           "XnnpackBackend: no runtime memory for a delegate "
                           "handle (%zu bytes)",
                           sizeof(XnnpackExecutor));
  new (executor) XnnpackExecutor();
  // The executor keeps pointing into the blob (params, constants), so the
  // blob is not freed here; the runtime frees it with the delegate.
  const Error error = executor->init(processed->data(),
                                     processed->size(),
                                     context.get_named_data_map(),
                                     num_threads);
  if (error != Error::Ok) {
    executor->~XnnpackExecutor();
    return error;
  }
  return executor;
}

Error XnnpackBackend::execute(BackendExecutionContext& context,
                              DelegateHandle* handle,
                              Span<EValue*> args) const {
  ET_CHECK_OR_RETURN_ERROR(handle != nullptr,
                           DelegateInvalidHandle,
                           "XnnpackBackend: null delegate handle");
  return static_cast<XnnpackExecutor*>(handle)->execute(args,
                                                        context.event_tracer());
}

size_t XnnpackBackend::num_outputs(DelegateHandle* handle) const {
  return handle == nullptr
             ? 0
             : static_cast<const XnnpackExecutor*>(handle)->num_outputs();
}

void XnnpackBackend::destroy(DelegateHandle* handle) const {
  if (handle != nullptr) {
    static_cast<XnnpackExecutor*>(handle)->~XnnpackExecutor();
  }
}

Error register_xnnpack_backend() {
  static XnnpackBackend backend;
  if (runtime::get_backend_class(kXnnpackBackendId) == &backend) {
    return Error::Ok;
  }
  return runtime::register_backend({kXnnpackBackendId, &backend});
}

void set_num_threads(size_t num_threads) {
  set_default_num_threads(num_threads);
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
