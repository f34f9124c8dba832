// size_test: the smallest program that loads a .pte and runs a method with
// the runtime core alone (no kernel library), so that its stripped size is
// the size of the core. Memory comes from static pools; the inputs are
// filled with a byte pattern, and each input and output is printed with a
// checksum of its bytes so that a caller can check the run.
//
//   size_test model.pte [method_name]
//
// A program that calls operators fails to load here (no kernel is
// registered); programs that only move values, or run on delegates, run.

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::extension::FileDataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;

namespace {

// Method metadata, inputs and planned memory share these pools.
uint8_t method_pool[64 * 1024];
uint8_t planned_pool[256 * 1024];
constexpr size_t kMaxPlannedBuffers = 8;

uint32_t checksum(const void* data, size_t size) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  uint32_t sum = 0;
  for (size_t i = 0; i < size; ++i) {
    sum = sum * 31u + bytes[i];
  }
  return sum;
}

// Sets every tensor input of `method` to a tensor in `allocator` whose byte
// i is i % 251; other inputs keep the value the program was exported with.
Error set_pattern_inputs(Method& method,
                         const MethodMeta& meta,
                         MemoryAllocator& allocator) {
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    if (*meta.input_tag(i) != Tag::Tensor) {
      continue;
    }
    const TensorInfo info = *meta.input_tensor_meta(i);
    const size_t dim = info.sizes().size();
    auto* sizes = allocator.allocateList<TensorImpl::SizesType>(dim + 1);
    auto* dim_order = allocator.allocateList<TensorImpl::DimOrderType>(dim + 1);
    auto* strides = allocator.allocateList<TensorImpl::StridesType>(dim + 1);
    auto* data = allocator.allocateList<uint8_t>(info.nbytes() + 1);
    auto* impl = allocator.allocateInstance<TensorImpl>();
    if (sizes == nullptr || dim_order == nullptr || strides == nullptr ||
        data == nullptr || impl == nullptr) {
      return Error::MemoryAllocationFailed;
    }
    std::memcpy(sizes, info.sizes().data(), dim * sizeof(*sizes));
    std::memcpy(dim_order, info.dim_order().data(), dim * sizeof(*dim_order));
    if (dim > 0) {
      const Error layout = executorch::runtime::dim_order_to_stride(
          sizes, dim_order, dim, strides);
      if (layout != Error::Ok) {
        return layout;
      }
    }
    for (size_t b = 0; b < info.nbytes(); ++b) {
      data[b] = static_cast<uint8_t>(b % 251);
    }
    new (impl) TensorImpl(info.scalar_type(),
                          static_cast<ssize_t>(dim),
                          sizes,
                          data,
                          dim_order,
                          strides);
    std::printf("input %zu: %zu bytes, checksum %" PRIu32 "\n",
                i,
                info.nbytes(),
                checksum(data, info.nbytes()));
    const Error set = method.set_input(EValue(Tensor(impl)), i);
    if (set != Error::Ok) {
      return set;
    }
  }
  return Error::Ok;
}

int fail(const char* what, Error error) {
  std::printf(
      "size_test: %s failed: error %d\n", what, static_cast<int>(error));
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::printf("usage: size_test model.pte [method_name]\n");
    return 2;
  }
  const char* method_name = argc > 2 ? argv[2] : "forward";
  executorch::runtime::runtime_init();

  Result<FileDataLoader> loader = FileDataLoader::from(argv[1]);
  if (!loader.ok()) {
    return fail("opening the model", loader.error());
  }
  Result<Program> program = Program::load(&loader.get());
  if (!program.ok()) {
    return fail("Program::load", program.error());
  }
  Result<MethodMeta> meta = program->method_meta(method_name);
  if (!meta.ok()) {
    return fail("method_meta", meta.error());
  }

  // Planned buffers, carved out of the static pool.
  MemoryAllocator planned_allocator(sizeof(planned_pool), planned_pool);
  Span<uint8_t> buffers[kMaxPlannedBuffers];
  const size_t num_buffers = meta->num_memory_planned_buffers();
  if (num_buffers > kMaxPlannedBuffers) {
    return fail("planning memory", Error::NotSupported);
  }
  for (size_t i = 0; i < num_buffers; ++i) {
    const size_t size =
        static_cast<size_t>(*meta->memory_planned_buffer_size(i));
    uint8_t* buffer = planned_allocator.allocateList<uint8_t>(size + 1);
    if (buffer == nullptr) {
      return fail("planning memory", Error::MemoryAllocationFailed);
    }
    buffers[i] = Span<uint8_t>(buffer, size);
  }
  HierarchicalAllocator planned_memory({buffers, num_buffers});
  MemoryAllocator method_allocator(sizeof(method_pool), method_pool);
  MemoryManager memory(&method_allocator, &planned_memory);

  Result<Method> method = program->load_method(method_name, &memory);
  if (!method.ok()) {
    return fail("load_method", method.error());
  }
  const Error inputs = set_pattern_inputs(*method, *meta, method_allocator);
  if (inputs != Error::Ok) {
    return fail("setting the inputs", inputs);
  }
  const Error status = method->execute();
  if (status != Error::Ok) {
    return fail("execute", status);
  }
  for (size_t i = 0; i < method->outputs_size(); ++i) {
    const EValue& output = method->get_output(i);
    if (output.isTensor()) {
      const Tensor& tensor = output.toTensor();
      std::printf("output %zu: %zu bytes, checksum %" PRIu32 "\n",
                  i,
                  tensor.nbytes(),
                  checksum(tensor.const_data_ptr(), tensor.nbytes()));
    }
  }
  std::printf("size_test: ran '%s' of %s\n", method_name, argv[1]);
  return 0;
}
