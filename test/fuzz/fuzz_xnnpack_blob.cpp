// Fuzz target: untrusted bytes as an XNNPACK delegate blob, through the
// registered backend's init() (blob parsing, graph checks, building the
// XNNPACK runtime) and destroy(), as Method::load does for a delegate.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/platform/runtime.h>

using executorch::runtime::ArrayRef;
using executorch::runtime::BackendInitContext;
using executorch::runtime::BackendInterface;
using executorch::runtime::CompileSpec;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::MemoryAllocator;

namespace {

BackendInterface* set_up() {
  executorch::runtime::runtime_init();
  (void)executorch::backends::xnnpack::register_xnnpack_backend();
  return executorch::runtime::get_backend_class(
      executorch::backends::xnnpack::kXnnpackBackendId);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static BackendInterface* backend = set_up();
  if (backend == nullptr || !backend->is_available()) {
    return 0;
  }
  static std::vector<uint8_t> pool(4 << 20);
  MemoryAllocator allocator(pool.size(), pool.data());
  BackendInitContext context(&allocator, nullptr, "forward");
  FreeableBuffer processed(data, size, nullptr);
  auto handle = backend->init(context, &processed, ArrayRef<CompileSpec>());
  if (handle.ok()) {
    backend->destroy(*handle);
  }
  return 0;
}
