#include <executorch/extension/llm/runner/register_libraries.h>

#include <initializer_list>

#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
#include <executorch/kernels/optimized/register_optimized_kernels.h>
#else
#include <executorch/kernels/portable/register_portable_kernels.h>
#endif
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/kernels/quantized/register_quantized_kernels.h>
#ifdef EXECUTORCH_WITH_LLM_CUSTOM_OPS
#include <executorch/extension/llm/custom_ops/register_custom_ops.h>
#endif
#include <executorch/runtime/platform/runtime.h>
#ifdef EXECUTORCH_WITH_XNNPACK
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#endif

namespace executorch {
namespace extension {
namespace llm {

using ::executorch::runtime::Error;

Error register_runner_libraries() {
  static const Error result = [] {
    ::executorch::runtime::runtime_init();
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
    Error error = ::executorch::kernels::register_optimized_kernels();
#else
    Error error = ::executorch::kernels::register_portable_kernels();
#endif
    for (Error next : {::executorch::kernels::register_prim_ops(),
                       ::executorch::kernels::register_quantized_kernels()}) {
      if (error == Error::Ok) {
        error = next;
      }
    }
#ifdef EXECUTORCH_WITH_LLM_CUSTOM_OPS
    if (error == Error::Ok) {
      error = ::executorch::extension::llm::register_custom_ops();
    }
#endif
#ifdef EXECUTORCH_WITH_XNNPACK
    if (error == Error::Ok) {
      error = ::executorch::backends::xnnpack::register_xnnpack_backend();
    }
#endif
    return error;
  }();
  return result;
}

} // namespace llm
} // namespace extension
} // namespace executorch
