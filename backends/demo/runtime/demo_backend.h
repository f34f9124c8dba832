#pragma once

// The runtime half of BackendWithCompilerDemo, the tiny backend upstream's
// delegation tutorials lower to (its compiler:
// exir/backend/test/backend_with_compiler_demo.py). Each delegate handle is
// a DemoProgram in the method's runtime allocator; nothing uses the heap.
// Compile specs are not used.

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/error.h>

namespace executorch {
namespace backends {
namespace demo {

// The backend id in .pte delegates (the compiler class's name).
inline constexpr const char kDemoBackendId[] = "BackendWithCompilerDemo";

class DemoBackend final : public runtime::BackendInterface {
 public:
  bool is_available() const override {
    return true;
  }

  runtime::Result<runtime::DelegateHandle*> init(
      runtime::BackendInitContext& context,
      runtime::FreeableBuffer* processed,
      runtime::ArrayRef<runtime::CompileSpec> compile_specs) const override;

  runtime::Error execute(runtime::BackendExecutionContext& context,
                         runtime::DelegateHandle* handle,
                         runtime::Span<runtime::EValue*> args) const override;

  size_t num_outputs(runtime::DelegateHandle* handle) const override;
};

// Registers the backend under kDemoBackendId (explicitly, so static linking
// cannot drop it). Calling it again is harmless and returns Ok.
runtime::Error register_demo_backend();

} // namespace demo
} // namespace backends
} // namespace executorch
