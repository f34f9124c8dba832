// Fuzz target: untrusted bytes as a .pte, through Program::load, then
// load_method and execute of each method with the portable kernels, the
// prim ops and the XNNPACK backend (when built), inputs of ones sized from
// the method's metadata and an instruction budget. Any crash, sanitizer
// report or hang is a bug; errors are the expected outcome.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/runner_util/inputs.h>
#include <executorch/kernels/portable/register_portable_kernels.h>
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>
#ifdef EXECUTORCH_WITH_XNNPACK
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#endif

using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;

namespace {

// What one input may make the harness allocate: a program is free to ask
// for more, and an app would refuse it the same way.
constexpr size_t kMaxPlannedBytes = 16 << 20;
constexpr size_t kMethodPoolBytes = 4 << 20;
constexpr size_t kTempPoolBytes = 1 << 20;
constexpr size_t kMaxInputBytes = 4 << 20;
constexpr size_t kMaxMethods = 4;
// Far below Method::kMaxInstructionsForUntrustedPrograms (a million, about
// 1.7 s of CPU under ASan): a loop that long only repeats what its first
// thousands of instructions cover, and would read as a timeout on a busy
// machine. The budget's own behaviour is tested in method_malformed_test.
constexpr size_t kMaxInstructions = 10000;

bool set_up() {
  executorch::runtime::runtime_init();
  (void)executorch::kernels::register_portable_kernels();
  (void)executorch::kernels::register_prim_ops();
#ifdef EXECUTORCH_WITH_XNNPACK
  (void)executorch::backends::xnnpack::register_xnnpack_backend();
#endif
  return true;
}

void run_method(const Program& program, const char* name) {
  Result<MethodMeta> meta = program.method_meta(name);
  if (!meta.ok()) {
    return;
  }
  std::vector<std::vector<uint8_t>> planned;
  std::vector<Span<uint8_t>> spans;
  size_t planned_total = 0;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    Result<int64_t> size = meta->memory_planned_buffer_size(i);
    if (!size.ok() || *size < 0 ||
        static_cast<uint64_t>(*size) > kMaxPlannedBytes - planned_total) {
      return;
    }
    planned_total += static_cast<size_t>(*size);
    planned.emplace_back(static_cast<size_t>(*size));
    spans.emplace_back(planned.back().data(), planned.back().size());
  }
  HierarchicalAllocator planned_memory({spans.data(), spans.size()});
  static std::vector<uint8_t> method_pool(kMethodPoolBytes);
  static std::vector<uint8_t> temp_pool(kTempPoolBytes);
  MemoryAllocator method_allocator(method_pool.size(), method_pool.data());
  MemoryAllocator temp_allocator(temp_pool.size(), temp_pool.data());
  MemoryManager memory(&method_allocator, &planned_memory, &temp_allocator);
  Result<Method> method = program.load_method(name, &memory);
  if (!method.ok()) {
    return;
  }
  method->set_max_instructions(kMaxInstructions);
  executorch::extension::PrepareInputTensorsOptions options;
  options.max_total_allocation_size = kMaxInputBytes;
  auto inputs = executorch::extension::prepare_input_tensors(*method, options);
  if (!inputs.ok()) {
    return;
  }
  // Twice: state left by the first run (resized tensors, moved values)
  // must not break the second.
  for (int run = 0; run < 2; ++run) {
    if (method->execute() != Error::Ok) {
      return;
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = set_up();
  (void)ready;
  BufferDataLoader loader(data, size);
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) {
    return 0;
  }
  const size_t methods = program->num_methods();
  for (size_t m = 0; m < methods && m < kMaxMethods; ++m) {
    Result<const char*> name = program->get_method_name(m);
    if (name.ok()) {
      run_method(*program, *name);
    }
  }
  return 0;
}
