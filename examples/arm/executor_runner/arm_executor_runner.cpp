// Firmware that runs the .pte programs embedded in flash (model_pte.h,
// written at build time by gen_model_pte.py) one after the other: each
// program is read in place by a BufferDataLoader, planned memory and the
// method and temp allocators are static arenas (reused by each program), and
// nothing uses the heap. For each program it fills the inputs (all ones, or
// the bytes given at build time), executes once and prints
//
//   model M: NAME
//   output N: DTYPE [d0, d1, ...] v0 v1 ...     (floats as %.9g)
//   cycles: load L execute E
//
// on semihosting standard output, then exits 0. Any failure prints what
// failed and why on standard error and exits with FirmwareExit::kError.
//
// Built without kernels (EXECUTORCH_ARM_NO_KERNELS) it is the core-alone
// image whose size run.sh --size reports: it loads the program and stops at
// the first operator it cannot find. Built with EXECUTORCH_ARM_FAULTING_RELU
// (arm_fault_runner) its float relu executes an undefined instruction, so
// test/arm can check what the fault handler prints.

#include <executorch/examples/arm/cortex_m/fault.h>
#include <executorch/examples/arm/cortex_m/format.h>
#include <executorch/examples/arm/cortex_m/semihosting.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>

#ifdef EXECUTORCH_ARM_FAULTING_RELU
#include <executorch/examples/arm/cortex_m/faulting_kernel.h>
#endif
#ifndef EXECUTORCH_ARM_NO_KERNELS
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/kernels/portable/register_portable_kernels.h>
#endif
#ifdef EXECUTORCH_ARM_QUANTIZED
#include <executorch/kernels/quantized/register_quantized_kernels.h>
#endif

#include <model_pte.h>

#include <algorithm>
#include <cstdarg>
#include <new>
#include <type_traits>
#include <cstring>

#ifndef EXECUTORCH_ARM_METHOD_ARENA_SIZE
#define EXECUTORCH_ARM_METHOD_ARENA_SIZE (128 * 1024)
#endif
#ifndef EXECUTORCH_ARM_TEMP_ARENA_SIZE
#define EXECUTORCH_ARM_TEMP_ARENA_SIZE (16 * 1024)
#endif
// 0: exactly what the program plans (model_pte.h).
#if !defined(EXECUTORCH_ARM_PLANNED_ARENA_SIZE) || \
    EXECUTORCH_ARM_PLANNED_ARENA_SIZE == 0
#undef EXECUTORCH_ARM_PLANNED_ARENA_SIZE
#define EXECUTORCH_ARM_PLANNED_ARENA_SIZE (executorch_arm_model::kPlannedBytes)
#endif

namespace {

using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;
using executorch::arm::FirmwareExit;
using executorch::extension::BufferDataLoader;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::HierarchicalAllocator;
using executorch::runtime::MemoryAllocator;
using executorch::runtime::MemoryManager;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Span;
using executorch::runtime::Tag;
using executorch::runtime::TensorInfo;

// Planned buffers are carved from one pool, each aligned like this.
constexpr size_t kPlannedAlignment = 16;
constexpr size_t kMaxPlannedBuffers = 16;

__attribute__((section(".arena"), aligned(16))) uint8_t
    method_arena[EXECUTORCH_ARM_METHOD_ARENA_SIZE];
__attribute__((section(".arena"), aligned(16))) uint8_t
    temp_arena[EXECUTORCH_ARM_TEMP_ARENA_SIZE];
__attribute__((section(".arena"), aligned(16))) uint8_t
    planned_arena[EXECUTORCH_ARM_PLANNED_ARENA_SIZE + 1];

// Formats one line (up to 255 bytes) onto standard output or error.
__attribute__((format(printf, 2, 3))) void print(bool error,
                                                 const char* format,
                                                 ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  int length = et_vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (length < 0) {
    return;
  }
  if (static_cast<size_t>(length) >= sizeof(line)) {
    length = sizeof(line) - 1;
  }
  if (error) {
    executorch::arm::semihosting_write_stderr(line, length);
  } else {
    executorch::arm::semihosting_write_stdout(line, length);
  }
}

int failed(const char* what, Error error) {
  print(true,
        "firmware: %s failed: %s (error 0x%x)\n",
        what,
        executorch::runtime::to_string(error),
        static_cast<unsigned>(error));
  return static_cast<int>(FirmwareExit::kError);
}

size_t align_up(size_t size) {
  return (size + kPlannedAlignment - 1) / kPlannedAlignment *
         kPlannedAlignment;
}

size_t planned_buffer_size(const MethodMeta& meta, size_t index) {
  return static_cast<size_t>(*meta.memory_planned_buffer_size(index));
}

// Splits planned_arena into the method's planned buffers, or says why not.
bool carve_planned_buffers(const MethodMeta& meta,
                           Span<uint8_t>* buffers,
                           size_t* count) {
  const size_t n = meta.num_memory_planned_buffers();
  size_t needed = 0;
  for (size_t i = 0; i < n; ++i) {
    needed += align_up(planned_buffer_size(meta, i));
  }
  if (n > kMaxPlannedBuffers || needed > EXECUTORCH_ARM_PLANNED_ARENA_SIZE) {
    print(true,
          "firmware: method '%s' plans %u bytes in %u buffers, but the "
          "planned arena holds %u bytes in at most %u buffers "
          "(EXECUTORCH_ARM_PLANNED_ARENA_SIZE)\n",
          meta.name(),
          static_cast<unsigned>(needed),
          static_cast<unsigned>(n),
          static_cast<unsigned>(EXECUTORCH_ARM_PLANNED_ARENA_SIZE),
          static_cast<unsigned>(kMaxPlannedBuffers));
    return false;
  }
  size_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t size = planned_buffer_size(meta, i);
    buffers[i] = Span<uint8_t>(planned_arena + offset, size);
    offset += align_up(size);
  }
  *count = n;
  return true;
}

// Calls fn(T{}) with the C++ type T of `type`; false for dtypes the
// runner neither fills nor prints (complex, quantized, bits).
template <typename Fn>
bool visit_dtype(ScalarType type, Fn fn) {
  switch (type) {
    case ScalarType::Float:
      fn(float{});
      return true;
    case ScalarType::Double:
      fn(double{});
      return true;
    case ScalarType::Half:
      fn(executorch::aten::Half{});
      return true;
    case ScalarType::BFloat16:
      fn(executorch::aten::BFloat16{});
      return true;
    case ScalarType::Byte:
      fn(uint8_t{});
      return true;
    case ScalarType::Char:
      fn(int8_t{});
      return true;
    case ScalarType::Short:
      fn(int16_t{});
      return true;
    case ScalarType::Int:
      fn(int32_t{});
      return true;
    case ScalarType::Long:
      fn(int64_t{});
      return true;
    case ScalarType::Bool:
      fn(bool{});
      return true;
    default:
      return false;
  }
}

Error fill_ones(ScalarType type, void* data, size_t nbytes) {
  const bool known = visit_dtype(type, [&](auto zero) {
    using T = decltype(zero);
    T* values = static_cast<T*>(data);
    for (size_t i = 0; i < nbytes / sizeof(T); ++i) {
      values[i] = T(1);
    }
  });
  if (!known) {
    print(true, "firmware: cannot fill an input of dtype %s\n",
          executorch::runtime::toString(type));
    return Error::NotSupported;
  }
  return Error::Ok;
}

// Gives every tensor input a tensor whose bytes come from `source` (the
// build-time input file, consumed in input order) or are all ones.
Error set_inputs(Method& method,
                 const MethodMeta& meta,
                 const executorch_arm_model::Model& model,
                 MemoryAllocator& allocator) {
  const uint8_t* source = model.inputs;
  size_t remaining = model.input_size;
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
      print(true, "firmware: no room for input %u in the method arena\n",
            static_cast<unsigned>(i));
      return Error::MemoryAllocationFailed;
    }
    std::memcpy(sizes, info.sizes().data(), dim * sizeof(*sizes));
    std::memcpy(dim_order, info.dim_order().data(), dim * sizeof(*dim_order));
    if (dim > 0) {
      ET_CHECK_OK_OR_RETURN_ERROR(executorch::runtime::dim_order_to_stride(
          sizes, dim_order, dim, strides));
    }
    if (model.input_size == 0) {
      ET_CHECK_OK_OR_RETURN_ERROR(
          fill_ones(info.scalar_type(), data, info.nbytes()));
    } else if (remaining < info.nbytes()) {
      print(true,
            "firmware: the input file ends inside input %u (it needs %u "
            "more bytes, %u are left)\n",
            static_cast<unsigned>(i),
            static_cast<unsigned>(info.nbytes()),
            static_cast<unsigned>(remaining));
      return Error::InvalidArgument;
    } else {
      std::memcpy(data, source, info.nbytes());
      source += info.nbytes();
      remaining -= info.nbytes();
    }
    new (impl) TensorImpl(info.scalar_type(), dim, sizes, data, dim_order,
                          strides);
    ET_CHECK_OK_OR_RETURN_ERROR(method.set_input(EValue(Tensor(impl)), i));
  }
  if (remaining != 0) {
    print(true,
          "firmware: the input file has %u bytes more than the inputs use\n",
          static_cast<unsigned>(remaining));
    return Error::InvalidArgument;
  }
  return Error::Ok;
}

// Prints one value per element in full precision (floats as %.9g, which
// round-trips a float32).
template <typename T>
void print_values(const T* values, size_t count) {
  char line[160];
  size_t used = 0;
  for (size_t i = 0; i < count; ++i) {
    char value[40];
    int length;
    if constexpr (std::is_same_v<T, bool>) {
      length = et_snprintf(value, sizeof(value), " %d", values[i] ? 1 : 0);
    } else if constexpr (std::is_integral_v<T>) {
      length = et_snprintf(value, sizeof(value), " %lld",
                           static_cast<long long>(values[i]));
    } else {
      length = et_snprintf(value, sizeof(value), " %.9g",
                           static_cast<double>(values[i]));
    }
    if (used + length >= sizeof(line)) {
      executorch::arm::semihosting_write_stdout(line, used);
      used = 0;
    }
    std::memcpy(line + used, value, length);
    used += length;
  }
  line[used++] = '\n';
  executorch::arm::semihosting_write_stdout(line, used);
}

Error print_output(size_t index, const EValue& value) {
  if (value.isInt()) {
    print(false, "output %u: Int %lld\n", static_cast<unsigned>(index),
          static_cast<long long>(value.toInt()));
    return Error::Ok;
  }
  if (value.isDouble()) {
    print(false, "output %u: Double %.17g\n", static_cast<unsigned>(index),
          value.toDouble());
    return Error::Ok;
  }
  if (value.isBool()) {
    print(false, "output %u: Bool %d\n", static_cast<unsigned>(index),
          value.toBool() ? 1 : 0);
    return Error::Ok;
  }
  if (!value.isTensor()) {
    print(true, "firmware: output %u is neither a tensor nor a scalar\n",
          static_cast<unsigned>(index));
    return Error::NotSupported;
  }
  const Tensor tensor = value.toTensor();
  // "[d0, d1, ...]", cut short if it does not fit.
  char shape[96] = "[";
  size_t used = 1;
  const int dim = static_cast<int>(tensor.dim());
  for (int d = 0; d < dim; ++d) {
    const int length = et_snprintf(shape + used, sizeof(shape) - used,
                                   d == 0 ? "%d" : ", %d",
                                   static_cast<int>(tensor.size(d)));
    used = std::min(used + static_cast<size_t>(length), sizeof(shape) - 1);
  }
  et_snprintf(shape + used, sizeof(shape) - used, "]");
  print(false, "output %u: %s %s", static_cast<unsigned>(index),
        executorch::runtime::toString(tensor.scalar_type()), shape);
  const bool known = visit_dtype(tensor.scalar_type(), [&](auto zero) {
    using T = decltype(zero);
    print_values(tensor.const_data_ptr<T>(), tensor.numel());
  });
  if (!known) {
    print(true, "\nfirmware: cannot print output %u of dtype %s\n",
          static_cast<unsigned>(index),
          executorch::runtime::toString(tensor.scalar_type()));
    return Error::NotSupported;
  }
  return Error::Ok;
}

// Loads `model`, runs its method once and prints its outputs.
int run_model(const executorch_arm_model::Model& model) {
  const uint64_t load_start = et_pal_current_ticks();
  BufferDataLoader loader(model.program, model.program_size);
  auto program =
      Program::load(&loader, Program::Verification::InternalConsistency);
  if (!program.ok()) {
    return failed("loading the program", program.error());
  }
  auto meta = program->method_meta(model.method);
  if (!meta.ok()) {
    return failed("reading the method's metadata", meta.error());
  }
  Span<uint8_t> buffers[kMaxPlannedBuffers];
  size_t num_buffers = 0;
  if (!carve_planned_buffers(*meta, buffers, &num_buffers)) {
    return static_cast<int>(FirmwareExit::kError);
  }
  HierarchicalAllocator planned_memory({buffers, num_buffers});
  MemoryAllocator method_allocator(sizeof(method_arena), method_arena);
  MemoryAllocator temp_allocator(sizeof(temp_arena), temp_arena);
  MemoryManager memory_manager(
      &method_allocator, &planned_memory, &temp_allocator);
  auto method = program->load_method(model.method, &memory_manager);
  if (!method.ok()) {
    print(true,
          "firmware: loading method '%s' failed (%u of %u method arena "
          "bytes used)\n",
          model.method,
          static_cast<unsigned>(method_allocator.used_size()),
          static_cast<unsigned>(sizeof(method_arena)));
    return failed("loading the method", method.error());
  }
  const Error inputs = set_inputs(*method, *meta, model, method_allocator);
  if (inputs != Error::Ok) {
    return failed("setting the inputs", inputs);
  }
  const uint64_t execute_start = et_pal_current_ticks();
  executorch::arm::set_executing_method(&*method);
  const Error executed = method->execute();
  executorch::arm::set_executing_method(nullptr);
  const uint64_t execute_end = et_pal_current_ticks();
  if (executed != Error::Ok) {
    return failed("executing the method", executed);
  }
  for (size_t i = 0; i < method->outputs_size(); ++i) {
    const Error printed = print_output(i, method->get_output(i));
    if (printed != Error::Ok) {
      return failed("printing the outputs", printed);
    }
  }
  print(false,
        "cycles: load %llu execute %llu\n",
        static_cast<unsigned long long>(execute_start - load_start),
        static_cast<unsigned long long>(execute_end - execute_start));
  return static_cast<int>(FirmwareExit::kOk);
}

} // namespace

int main() {
  executorch::runtime::runtime_init();
#ifndef EXECUTORCH_ARM_NO_KERNELS
  Error registered = executorch::kernels::register_prim_ops();
#ifdef EXECUTORCH_ARM_FAULTING_RELU
  if (registered == Error::Ok) {
    registered = executorch::arm::register_faulting_relu();
  }
#endif
  if (registered == Error::Ok) {
    registered = executorch::kernels::register_portable_kernels();
  }
#ifdef EXECUTORCH_ARM_QUANTIZED
  if (registered == Error::Ok) {
    registered = executorch::kernels::register_quantized_kernels();
  }
#endif
  if (registered != Error::Ok) {
    return failed("registering the kernels", registered);
  }
#endif
  size_t index = 0;
  for (const auto& model : executorch_arm_model::kModels) {
    print(false, "model %u: %s\n", static_cast<unsigned>(index++), model.name);
    const int status = run_model(model);
    if (status != static_cast<int>(FirmwareExit::kOk)) {
      return status;
    }
  }
  return static_cast<int>(FirmwareExit::kOk);
}
