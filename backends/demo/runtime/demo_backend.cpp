#include <executorch/backends/demo/runtime/demo_backend.h>

#include <executorch/backends/demo/runtime/demo_program.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace demo {

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

Result<DelegateHandle*> DemoBackend::init(BackendInitContext& context,
                                          FreeableBuffer* processed,
                                          ArrayRef<CompileSpec>) const {
  Result<DemoProgram*> program = DemoProgram::parse(
      processed->data(), processed->size(), context.get_runtime_allocator());
  if (!program.ok()) {
    return program.error();
  }
  // The program copied what it needs (constants) out of the blob.
  processed->Free();
  return program.get();
}

Error DemoBackend::execute(BackendExecutionContext&,
                           DelegateHandle* handle,
                           Span<EValue*> args) const {
  ET_CHECK_OR_RETURN_ERROR(handle != nullptr,
                           DelegateInvalidHandle,
                           "BackendWithCompilerDemo: null delegate handle");
  return static_cast<const DemoProgram*>(handle)->execute(args);
}

size_t DemoBackend::num_outputs(DelegateHandle* handle) const {
  return handle == nullptr
             ? 0
             : static_cast<const DemoProgram*>(handle)->num_outputs();
}

Error register_demo_backend() {
  static DemoBackend backend;
  if (runtime::get_backend_class(kDemoBackendId) == &backend) {
    return Error::Ok;
  }
  return runtime::register_backend({kDemoBackendId, &backend});
}

} // namespace demo
} // namespace backends
} // namespace executorch
