#pragma once

// XnnpackBackend: the BackendInterface of the XNNPACK delegate. Each
// delegate handle is an XnnpackExecutor placed in the method's runtime
// allocator; XNNPACK's own objects and the executor's tables use the heap.
//
// Compile specs: "num_threads", an unsigned little-endian integer of 1 to 8
// bytes, sets this delegate's thread count (0: the process default). Other
// keys are ignored.

#include <executorch/runtime/backend/interface.h>

namespace executorch {
namespace backends {
namespace xnnpack {

class XnnpackBackend final : public runtime::BackendInterface {
 public:
  bool is_available() const override;

  runtime::Result<runtime::DelegateHandle*> init(
      runtime::BackendInitContext& context,
      runtime::FreeableBuffer* processed,
      runtime::ArrayRef<runtime::CompileSpec> compile_specs) const override;

  runtime::Error execute(runtime::BackendExecutionContext& context,
                         runtime::DelegateHandle* handle,
                         runtime::Span<runtime::EValue*> args) const override;

  size_t num_outputs(runtime::DelegateHandle* handle) const override;

  void destroy(runtime::DelegateHandle* handle) const override;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
