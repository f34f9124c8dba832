// _portable_lib: Python bindings for the runtime, the data loaders, the
// portable kernels and (when built with it) the XNNPACK delegate backend.
//
// This module links no libtorch. Tensors cross the boundary as numpy arrays
// (any object with the buffer protocol is accepted as input); dtypes numpy
// has no type for (BFloat16, the Float8 kinds) travel as a TypedArray: an
// array of same-width integers plus the ExecuTorch dtype. Outputs are always
// copied out of the method's memory, so they stay valid after the next run.
// The torch-facing API (portable_lib.py, executorch.runtime) is a thin Python
// layer over this one.
//
// Failures raise Python exceptions whose text names the operation, the
// method and the input concerned, the runtime Error code, and the error
// lines the runtime logged while failing (which say what was expected and
// what was found).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/devtools/etdump/etdump_gen.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#ifdef EXECUTORCH_WITH_THREADPOOL
#include <executorch/extension/threadpool/threadpool.h>
#endif
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
#include <executorch/kernels/optimized/register_optimized_kernels.h>
#endif
#include <executorch/kernels/portable/register_portable_kernels.h>
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/kernels/quantized/register_quantized_kernels.h>
#ifdef EXECUTORCH_WITH_LLM_CUSTOM_OPS
#include <executorch/extension/llm/custom_ops/register_custom_ops.h>
#endif
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>
#include <executorch/backends/demo/runtime/demo_backend.h>
#ifdef EXECUTORCH_WITH_XNNPACK
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#endif

namespace py = pybind11;

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::aten::TensorImpl;
using ::executorch::aten::TensorShapeDynamism;
using ::executorch::etdump::ETDumpGen;
using ::executorch::etdump::ETDumpResult;
using ::executorch::extension::BufferDataLoader;
using ::executorch::extension::MmapDataLoader;
using ::executorch::extension::Module;
using ::executorch::extension::TensorPtr;
using ::executorch::runtime::DataLoader;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Method;
using ::executorch::runtime::MethodMeta;
using ::executorch::runtime::Program;
using ::executorch::runtime::Result;
using ::executorch::runtime::Span;
using ::executorch::runtime::Tag;
using ::executorch::runtime::TensorInfo;

namespace {

// ---------------------------------------------------------------------------
// Runtime log lines become part of exception messages.

// While alive, collects the Error and Fatal lines the runtime logs on this
// thread instead of printing them, so the exception raised for a failed call
// can carry them. Nests: an inner capture hides lines from the outer one.
class ErrorLogCapture {
 public:
  ErrorLogCapture() : outer_(active_) {
    active_ = this;
  }
  ~ErrorLogCapture() {
    active_ = outer_;
  }
  ErrorLogCapture(const ErrorLogCapture&) = delete;
  ErrorLogCapture& operator=(const ErrorLogCapture&) = delete;

  // Records the line if a capture is active; false if none is.
  static bool record(const char* message, size_t length) {
    if (active_ == nullptr) {
      return false;
    }
    active_->lines_.emplace_back(message, length);
    return true;
  }

  std::string joined() const {
    std::string text;
    for (const std::string& line : lines_) {
      text += text.empty() ? "" : "; ";
      text += line;
    }
    return text;
  }

 private:
  static thread_local ErrorLogCapture* active_;
  ErrorLogCapture* outer_;
  std::vector<std::string> lines_;
};

thread_local ErrorLogCapture* ErrorLogCapture::active_ = nullptr;

// Text from a program (names, strings, log lines that quote them) may be
// any bytes; Python strings must be UTF-8. Valid UTF-8 sequences are kept,
// every other byte becomes "\xNN".
std::string valid_utf8(const std::string& bytes) {
  std::string text;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto byte = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
    const uint8_t lead = byte(i);
    size_t length = lead < 0x80                    ? 1
                    : lead >= 0xC2 && lead <= 0xDF ? 2
                    : lead >= 0xE0 && lead <= 0xEF ? 3
                    : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                   : 0;
    // The second byte's range excludes overlong forms, surrogates and code
    // points past U+10FFFF.
    const uint8_t low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    const uint8_t high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k < length; ++k) {
      const bool in_range = i + k < bytes.size() &&
                            byte(i + k) >= (k == 1 ? low : 0x80) &&
                            byte(i + k) <= (k == 1 ? high : 0xBF);
      if (!in_range) {
        length = 0;
        break;
      }
    }
    if (length == 0) {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", lead);
      text += escaped;
      ++i;
    } else {
      text.append(bytes, i, length);
      i += length;
    }
  }
  return text;
}

// Raises RuntimeError: "<what>: <ErrorName> (0x..): <logged lines>".
[[noreturn]] void raise_error(const std::string& what,
                              Error error,
                              const ErrorLogCapture& logs) {
  char code[32];
  std::snprintf(code,
                sizeof(code),
                " (0x%x)",
                static_cast<unsigned>(static_cast<uint32_t>(error)));
  std::string message =
      what + ": " + ::executorch::runtime::to_string(error) + code;
  const std::string logged = logs.joined();
  if (!logged.empty()) {
    message += ": " + logged;
  }
  throw std::runtime_error(valid_utf8(message));
}

void check_ok(Error error,
              const std::string& what,
              const ErrorLogCapture& logs) {
  if (error != Error::Ok) {
    raise_error(what, error, logs);
  }
}

template <typename T>
T unwrap(Result<T>&& result,
         const std::string& what,
         const ErrorLogCapture& logs) {
  if (!result.ok()) {
    raise_error(what, result.error(), logs);
  }
  return std::move(*result);
}

std::string quoted(const std::string& name) {
  return "'" + name + "'";
}

// ---------------------------------------------------------------------------
// dtypes.

// The ExecuTorch dtype of a numpy dtype, if there is one.
std::optional<ScalarType> scalar_type_of(const py::dtype& dtype) {
  const char kind = dtype.kind();
  const size_t size = static_cast<size_t>(dtype.itemsize());
  switch (kind) {
    case 'b':
      return ScalarType::Bool;
    case 'f':
      return size == 2   ? std::optional(ScalarType::Half)
             : size == 4 ? std::optional(ScalarType::Float)
             : size == 8 ? std::optional(ScalarType::Double)
                         : std::nullopt;
    case 'i':
      return size == 1   ? std::optional(ScalarType::Char)
             : size == 2 ? std::optional(ScalarType::Short)
             : size == 4 ? std::optional(ScalarType::Int)
             : size == 8 ? std::optional(ScalarType::Long)
                         : std::nullopt;
    case 'u':
      return size == 1   ? std::optional(ScalarType::Byte)
             : size == 2 ? std::optional(ScalarType::UInt16)
             : size == 4 ? std::optional(ScalarType::UInt32)
             : size == 8 ? std::optional(ScalarType::UInt64)
                         : std::nullopt;
    case 'c':
      return size == 8    ? std::optional(ScalarType::ComplexFloat)
             : size == 16 ? std::optional(ScalarType::ComplexDouble)
                          : std::nullopt;
    default:
      return std::nullopt;
  }
}

// The numpy dtype holding elements of `type`, if numpy has one.
std::optional<py::dtype> numpy_dtype_of(ScalarType type) {
  switch (type) {
    case ScalarType::Bool:
      return py::dtype("bool");
    case ScalarType::Half:
      return py::dtype("float16");
    case ScalarType::Float:
      return py::dtype("float32");
    case ScalarType::Double:
      return py::dtype("float64");
    case ScalarType::Char:
      return py::dtype("int8");
    case ScalarType::Short:
      return py::dtype("int16");
    case ScalarType::Int:
      return py::dtype("int32");
    case ScalarType::Long:
      return py::dtype("int64");
    case ScalarType::Byte:
      return py::dtype("uint8");
    case ScalarType::UInt16:
      return py::dtype("uint16");
    case ScalarType::UInt32:
      return py::dtype("uint32");
    case ScalarType::UInt64:
      return py::dtype("uint64");
    case ScalarType::ComplexFloat:
      return py::dtype("complex64");
    case ScalarType::ComplexDouble:
      return py::dtype("complex128");
    default:
      return std::nullopt;
  }
}

// Unsigned integers as wide as one element of `type`: how elements of a
// dtype numpy lacks are carried.
py::dtype bits_dtype_of(ScalarType type) {
  switch (::executorch::runtime::etensor::elementSize(type)) {
    case 1:
      return py::dtype("uint8");
    case 2:
      return py::dtype("uint16");
    case 4:
      return py::dtype("uint32");
    case 8:
      return py::dtype("uint64");
    default:
      throw std::invalid_argument(
          std::string("dtype ") + ::executorch::runtime::toString(type) +
          " has no fixed element size and cannot cross to Python");
  }
}

std::string dtype_name(ScalarType type) {
  return ::executorch::runtime::toString(type);
}

// An array whose elements are of ExecuTorch dtype `dtype`, held as
// same-width unsigned integers; for dtypes numpy has no type for.
struct TypedArray {
  py::array array;
  ScalarType dtype;
};

// ---------------------------------------------------------------------------
// Programs and methods.

// A loaded program and the bytes it reads from. Shared by its methods and
// metadata objects, which point into it.
// Profiling of a program's methods into an ETDump (enable_etdump), with
// the values of every instruction when a debug buffer is given.
struct Tracing {
  ETDumpGen etdump;
  std::vector<uint8_t> debug_buffer;
  // The methods of a program share the tracer: one runs at a time.
  std::mutex mutex;

  explicit Tracing(size_t debug_buffer_size) : debug_buffer(debug_buffer_size) {
    if (debug_buffer_size > 0) {
      (void)etdump.set_debug_buffer(
          Span<uint8_t>(debug_buffer.data(), debug_buffer.size()));
      etdump.set_event_tracer_debug_level(
          ::executorch::runtime::EventTracerDebugLogLevel::
              kIntermediateOutputs);
    }
  }

  void write(const std::string& path,
             const std::optional<std::string>& debug_buffer_path) {
    std::lock_guard<std::mutex> held(mutex);
    ETDumpResult result = etdump.get_etdump_data();
    std::unique_ptr<void, decltype(&std::free)> owned(result.buf, &std::free);
    if (result.buf == nullptr) {
      throw std::runtime_error("Writing the ETDump: out of memory");
    }
    write_file(path, result.buf, result.size);
    if (debug_buffer_path) {
      write_file(
          *debug_buffer_path, debug_buffer.data(), etdump.debug_buffer_used());
    }
  }

  static void write_file(const std::string& path,
                         const void* data,
                         size_t size) {
    std::unique_ptr<FILE, decltype(&std::fclose)> file(
        std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!file || std::fwrite(data, 1, size, file.get()) != size) {
      throw std::runtime_error("Cannot write " + quoted(path));
    }
  }
};

// How a program was asked to be profiled (the load functions' enable_etdump
// and debug_buffer_size).
struct TracingOptions {
  bool enable_etdump = false;
  size_t debug_buffer_size = 0;
};

struct ProgramState {
  // The program's bytes when loaded from a Python buffer (copied, so that
  // the caller may drop or change theirs).
  std::unique_ptr<uint8_t, decltype(&std::free)> bytes{nullptr, &std::free};
  std::unique_ptr<DataLoader> loader;
  std::optional<Program> program;
  // Where the program came from, for messages.
  std::string origin;
  // Null unless profiling was asked for.
  std::unique_ptr<Tracing> tracing;
  // share_memory_arenas: every method runs in the same planned buffers 0
  // and 1 (see SharedArenas), created on the first method load.
  bool share_memory_arenas = false;
  std::unique_ptr<::executorch::extension::SharedArenas> shared_arenas;
  size_t loaded_methods = 0;
  // The instruction budget each method starts with (0: none).
  size_t max_instructions = 0;
  // The program's external data (.ptd), if given: a file, or a copy of
  // its bytes. Each method's Module reads it through a loader of its own.
  std::string data_path;
  std::unique_ptr<uint8_t, decltype(&std::free)> data_bytes{nullptr,
                                                            &std::free};
  size_t data_size = 0;
};

// Alignment of the copy of a program loaded from a buffer: at least what
// constant data and segments in the file are aligned to relative to its
// start, so that kernels may use constants in place.
constexpr size_t kProgramBufferAlignment = 64;

std::shared_ptr<ProgramState> load_program(std::shared_ptr<ProgramState> state,
                                           Program::Verification verification,
                                           const TracingOptions& tracing) {
  ErrorLogCapture logs;
  state->program.emplace(
      unwrap(Program::load(state->loader.get(), verification),
             "Loading program from " + state->origin,
             logs));
  if (tracing.enable_etdump || tracing.debug_buffer_size > 0) {
    state->tracing = std::make_unique<Tracing>(tracing.debug_buffer_size);
  }
  return state;
}

// A loader over the program's external data, or null without one.
std::unique_ptr<DataLoader> data_map_loader(const ProgramState& state) {
  if (state.data_bytes) {
    return std::make_unique<BufferDataLoader>(state.data_bytes.get(),
                                              state.data_size);
  }
  if (state.data_path.empty()) {
    return nullptr;
  }
  ErrorLogCapture logs;
  return std::make_unique<MmapDataLoader>(
      unwrap(MmapDataLoader::from(state.data_path.c_str()),
             "Opening data file " + quoted(state.data_path),
             logs));
}

// Checks the external data once at load, so that a wrong file is reported
// by the load call rather than by the first method load.
void check_data_map(const ProgramState& state) {
  std::unique_ptr<DataLoader> loader = data_map_loader(state);
  if (loader) {
    ErrorLogCapture logs;
    unwrap(::executorch::extension::FlatTensorDataMap::load(loader.get()),
           "Loading data file " + (state.data_bytes
                                       ? "from a buffer of " +
                                             std::to_string(state.data_size) +
                                             " bytes"
                                       : quoted(state.data_path)),
           logs);
  }
}

std::shared_ptr<ProgramState> load_program_from_file(
    const std::string& path,
    Program::Verification verification,
    const TracingOptions& tracing) {
  auto state = std::make_shared<ProgramState>();
  state->origin = quoted(path);
  {
    ErrorLogCapture logs;
    // Locking pages is best effort: containers often forbid it.
    state->loader = std::make_unique<MmapDataLoader>(unwrap(
        MmapDataLoader::from(path.c_str(),
                             MmapDataLoader::MlockConfig::UseMlockIgnoreErrors),
        "Opening program file " + quoted(path),
        logs));
  }
  return load_program(std::move(state), verification, tracing);
}

// A copy of `size` bytes at `data`, aligned for a program.
std::unique_ptr<uint8_t, decltype(&std::free)> aligned_copy(const void* data,
                                                            size_t size) {
  // aligned_alloc wants a multiple of the alignment (and non-zero).
  const size_t padded =
      (size / kProgramBufferAlignment + 1) * kProgramBufferAlignment;
  std::unique_ptr<uint8_t, decltype(&std::free)> copy(
      static_cast<uint8_t*>(
          std::aligned_alloc(kProgramBufferAlignment, padded)),
      &std::free);
  if (!copy) {
    throw std::bad_alloc();
  }
  std::memcpy(copy.get(), data, size);
  return copy;
}

// The bytes of a contiguous Python buffer.
std::pair<const void*, size_t> contiguous_bytes(const py::buffer_info& info,
                                                const char* what) {
  py::ssize_t stride = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != stride) {
      throw std::invalid_argument(std::string(what) +
                                  ": the buffer must be contiguous");
    }
    stride *= info.shape[d];
  }
  return {info.ptr, static_cast<size_t>(info.size * info.itemsize)};
}

std::shared_ptr<ProgramState> load_program_from_bytes(
    const void* data,
    size_t size,
    const std::string& origin,
    Program::Verification verification,
    const TracingOptions& tracing) {
  auto state = std::make_shared<ProgramState>();
  state->origin = origin;
  state->bytes = aligned_copy(data, size);
  state->loader = std::make_unique<BufferDataLoader>(state->bytes.get(), size);
  return load_program(std::move(state), verification, tracing);
}

std::shared_ptr<ProgramState> load_program_from_buffer(
    const py::buffer& buffer,
    Program::Verification verification,
    const TracingOptions& tracing) {
  const py::buffer_info info = buffer.request();
  const auto bytes = contiguous_bytes(info, "Loading a program");
  return load_program_from_bytes(
      bytes.first,
      bytes.second,
      "a buffer of " + std::to_string(bytes.second) + " bytes",
      verification,
      tracing);
}

// A bundled program (.bpte): its bytes, checked, kept for its test cases.
struct PyBundledProgram {
  std::shared_ptr<uint8_t> bytes;
  size_t size = 0;
  const void* program = nullptr;
  size_t program_size = 0;
};

PyBundledProgram load_bundled_program(const py::buffer& buffer) {
  const py::buffer_info info = buffer.request();
  const auto bytes = contiguous_bytes(info, "Loading a bundled program");
  PyBundledProgram bundled;
  bundled.bytes = std::shared_ptr<uint8_t>(
      aligned_copy(bytes.first, bytes.second).release(), &std::free);
  bundled.size = bytes.second;
  ErrorLogCapture logs;
  if (!::executorch::bundled_program::is_bundled_program(bundled.bytes.get(),
                                                         bundled.size)) {
    throw std::invalid_argument(
        "Loading a bundled program: not a bundled program (no BP08 "
        "identifier)");
  }
  check_ok(
      ::executorch::bundled_program::get_program_data(bundled.bytes.get(),
                                                      bundled.size,
                                                      &bundled.program,
                                                      &bundled.program_size),
      "Loading a bundled program",
      logs);
  return bundled;
}

// Python view of a MethodMeta; keeps the program it reads from alive.
struct PyMethodMeta {
  std::shared_ptr<ProgramState> program;
  MethodMeta meta;
};

// Python view of a TensorInfo; keeps the program it reads from alive.
struct PyTensorInfo {
  std::shared_ptr<ProgramState> program;
  TensorInfo info;
};

PyMethodMeta method_meta_of(const std::shared_ptr<ProgramState>& program,
                            const std::string& name) {
  ErrorLogCapture logs;
  return PyMethodMeta{
      program,
      unwrap(program->program->method_meta(name.c_str()),
             "Method " + quoted(name) + " of program from " + program->origin,
             logs)};
}

// One loaded method: a Module over the shared program (which gives the
// method its planned memory, allocators and buffers for unplanned outputs),
// with the locking, conversions and error messages Python needs.
class MethodState {
 public:
  MethodState(std::shared_ptr<ProgramState> program, const std::string& name)
      : program_(std::move(program)),
        name_(name),
        // Shares ownership of the whole ProgramState, which keeps the
        // program's bytes and loader alive.
        module_(std::shared_ptr<Program>(program_, &*program_->program),
                nullptr,
                nullptr,
                nullptr,
                data_map_loader(*program_)) {
    // Raises, naming the program, if there is no such method.
    (void)method_meta_of(program_, name);
    ErrorLogCapture logs;
    ::executorch::runtime::HierarchicalAllocator* planned = nullptr;
    std::vector<uint8_t> shared_state;
    if (program_->share_memory_arenas) {
      if (!program_->shared_arenas) {
        program_->shared_arenas =
            std::make_unique<::executorch::extension::SharedArenas>(
                *program_->program);
      }
      const auto meta = program_->program->method_meta(name.c_str());
      planned_ = std::make_unique<::executorch::extension::PlannedMemory>(
          *meta, program_->shared_arenas->spans());
      planned = planned_->allocator();
      // Loading copies initial values into the shared mutable buffers:
      // keep the state the methods loaded before have built up.
      if (program_->loaded_methods > 0) {
        shared_state = program_->shared_arenas->save_state();
      }
    }
    ::executorch::runtime::EventTracer* tracer =
        program_->tracing ? &program_->tracing->etdump : nullptr;
    {
      const auto traced = lock_tracer();
      check_ok(module_.load_method(name, planned, tracer),
               "Loading method " + quoted(name) + " of program from " +
                   program_->origin,
               logs);
    }
    if (!shared_state.empty()) {
      program_->shared_arenas->restore_state(shared_state);
    }
    ++program_->loaded_methods;
    module_.set_max_instructions(program_->max_instructions);
    method_ = unwrap(module_.method(name), "Method " + quoted(name), logs);
  }

  MethodState(const MethodState&) = delete;
  MethodState& operator=(const MethodState&) = delete;

  const std::string& name() const {
    return name_;
  }

  // Each entry point takes the method's lock: a Method must not be used by
  // two threads at once, and execute() lets other Python threads run.
  void set_inputs(const py::sequence& inputs) {
    const auto held = lock();
    set_inputs_locked(inputs);
  }

  void execute() {
    const auto held = lock();
    execute_locked();
  }

  py::list get_outputs() const {
    const auto held = lock();
    return get_outputs_locked();
  }

  py::list call(const py::sequence& inputs) {
    const auto held = lock();
    set_inputs_locked(inputs);
    execute_locked();
    return get_outputs_locked();
  }

  PyMethodMeta method_meta() const {
    return PyMethodMeta{program_, method_->method_meta()};
  }

  // Runs the method's next instruction; false once every instruction has
  // run (the next step starts over). Between steps, get_value reads the
  // values instructions wrote, before later ones reuse their memory.
  bool step() {
    const auto held = lock();
    const auto traced = lock_tracer();
    ErrorLogCapture logs;
    Error status;
    {
      py::gil_scoped_release release;
      status = method_->step();
    }
    if (status == Error::EndOfMethod) {
      check_ok(method_->reset_execution(),
               "Resetting method " + quoted(name_),
               logs);
      return false;
    }
    if (status != Error::Ok) {
      // Like execute: a failed run starts over on the next call.
      (void)method_->reset_execution();
    }
    check_ok(status, "Stepping method " + quoted(name_), logs);
    return true;
  }

  void reset_execution() {
    const auto held = lock();
    ErrorLogCapture logs;
    check_ok(
        method_->reset_execution(), "Resetting method " + quoted(name_), logs);
  }

  void reset_mutable_buffers() {
    const auto held = lock();
    ErrorLogCapture logs;
    check_ok(method_->reset_mutable_buffers(),
             "Resetting the mutable buffers of method " + quoted(name_),
             logs);
  }

  size_t num_values() const {
    return method_->values_size();
  }

  void set_max_instructions(size_t max_instructions) {
    const auto held = lock();
    module_.set_max_instructions(max_instructions);
  }

  size_t max_instructions() const {
    return module_.max_instructions();
  }

  // Sets the inputs of test case `index` of a bundled program.
  void load_bundled_input(const PyBundledProgram& bundled, size_t index) {
    const auto held = lock();
    ErrorLogCapture logs;
    check_ok(::executorch::bundled_program::load_bundled_input(
                 *method_, bundled.bytes.get(), index),
             "Method " + quoted(name_) + ": loading bundled test case " +
                 std::to_string(index),
             logs);
    if (program_->tracing) {
      program_->tracing->etdump.set_bundled_input_index(
          static_cast<int>(index));
    }
  }

  // Checks the last execution's outputs against test case `index`.
  void verify_bundled_outputs(const PyBundledProgram& bundled,
                              size_t index,
                              double rtol,
                              double atol) {
    const auto held = lock();
    ErrorLogCapture logs;
    // The logged line names the worst element.
    const Error status = ::executorch::bundled_program::verify_method_outputs(
        *method_, bundled.bytes.get(), index, rtol, atol);
    check_ok(status,
             "Method " + quoted(name_) + ": bundled test case " +
                 std::to_string(index),
             logs);
  }

  // A copy of value `index` of the method's value table.
  py::object get_value(size_t index) const {
    const auto held = lock();
    if (index >= method_->values_size()) {
      throw py::index_error("Method " + quoted(name_) + " has " +
                            std::to_string(method_->values_size()) +
                            " values; value " + std::to_string(index) +
                            " is out of range");
    }
    return to_python(method_->get_value(index));
  }

 private:
  // Waits for the method with the GIL released: the holder may need the GIL
  // to finish, and waiting while holding it would deadlock.
  std::unique_lock<std::mutex> lock() const {
    py::gil_scoped_release release;
    return std::unique_lock<std::mutex>(mutex_);
  }

  // The program's tracer, when it has one, likewise.
  std::unique_lock<std::mutex> lock_tracer() const {
    if (!program_->tracing) {
      return std::unique_lock<std::mutex>();
    }
    py::gil_scoped_release release;
    return std::unique_lock<std::mutex>(program_->tracing->mutex);
  }

  void set_inputs_locked(const py::sequence& inputs) {
    const size_t expected = method_->inputs_size();
    if (inputs.size() != expected) {
      throw std::invalid_argument("Method " + quoted(name_) + " takes " +
                                  std::to_string(expected) + " inputs, got " +
                                  std::to_string(inputs.size()));
    }
    input_arrays_.clear();
    input_tensors_.clear();
    for (size_t i = 0; i < expected; ++i) {
      const EValue value = to_evalue(inputs[i], i);
      ErrorLogCapture logs;
      check_ok(module_.set_input(name_, value, i), input_context(i), logs);
    }
  }

  void execute_locked() {
    const auto traced = lock_tracer();
    ErrorLogCapture logs;
    Error status;
    {
      // The method touches no Python objects: other threads may run.
      py::gil_scoped_release release;
      status = method_->execute();
    }
    check_ok(status, "Executing method " + quoted(name_), logs);
  }

  py::list get_outputs_locked() const {
    py::list outputs;
    for (size_t i = 0; i < method_->outputs_size(); ++i) {
      outputs.append(to_python(method_->get_output(i)));
    }
    return outputs;
  }

  std::string input_context(size_t index) const {
    return "Method " + quoted(name_) + " input " + std::to_string(index);
  }

  EValue to_evalue(const py::handle& value, size_t index) {
    const EValue& expected = method_->get_input(index);
    switch (expected.tag) {
      case Tag::Tensor:
        return to_tensor(value, index, expected.toTensor());
      case Tag::Bool:
        if (py::isinstance<py::bool_>(value)) {
          return EValue(value.cast<bool>());
        }
        break;
      case Tag::Int:
        if (py::isinstance<py::int_>(value) &&
            !py::isinstance<py::bool_>(value)) {
          return EValue(value.cast<int64_t>());
        }
        break;
      case Tag::Double:
        if (py::isinstance<py::float_>(value) ||
            (py::isinstance<py::int_>(value) &&
             !py::isinstance<py::bool_>(value))) {
          return EValue(value.cast<double>());
        }
        break;
      case Tag::None:
        if (value.is_none()) {
          return EValue();
        }
        break;
      default:
        break;
    }
    throw py::type_error(
        input_context(index) + ": expected " +
        ::executorch::runtime::tag_to_string(expected.tag) + ", got Python " +
        std::string(py::str(py::type::of(value).attr("__name__"))));
  }

  // Builds a tensor laid out in the dim order the method expects (so a
  // channels-last input needs no caller-side permute).
  EValue to_tensor(const py::handle& value,
                   size_t index,
                   const Tensor& expected) {
    py::array array;
    std::optional<ScalarType> dtype;
    if (py::isinstance<TypedArray>(value)) {
      const TypedArray& typed = value.cast<const TypedArray&>();
      array = typed.array;
      dtype = typed.dtype;
    } else if (py::isinstance<py::array>(value)) {
      array = py::array::ensure(value);
      if (array.dtype().byteorder() == '>') {
        // The runtime reads native (little-endian) elements.
        array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
      }
      dtype = scalar_type_of(array.dtype());
      if (!dtype) {
        throw py::type_error(input_context(index) + ": numpy dtype " +
                             std::string(py::str(array.dtype())) +
                             " has no ExecuTorch equivalent; expected " +
                             dtype_name(expected.scalar_type()));
      }
    } else {
      throw py::type_error(
          input_context(index) + ": expected a tensor (" +
          dtype_name(expected.scalar_type()) + "), got Python " +
          std::string(py::str(py::type::of(value).attr("__name__"))));
    }

    const size_t rank = static_cast<size_t>(array.ndim());
    std::vector<TensorImpl::SizesType> sizes;
    for (size_t d = 0; d < rank; ++d) {
      const py::ssize_t size = array.shape(static_cast<py::ssize_t>(d));
      if (size > INT32_MAX) {
        throw std::invalid_argument(input_context(index) + ": dimension " +
                                    std::to_string(d) + " is too large");
      }
      sizes.push_back(static_cast<TensorImpl::SizesType>(size));
    }
    // Use the expected dim order when the rank matches; otherwise the
    // runtime reports the rank mismatch.
    const auto expected_order = expected.dim_order();
    std::vector<TensorImpl::DimOrderType> dim_order;
    bool permuted = false;
    for (size_t d = 0; d < rank; ++d) {
      const auto axis = rank == expected_order.size()
                            ? expected_order[d]
                            : static_cast<TensorImpl::DimOrderType>(d);
      dim_order.push_back(axis);
      permuted = permuted || axis != d;
    }
    if (permuted) {
      array = array.attr("transpose")(py::tuple(py::cast(dim_order)));
    }
    array = py::array::ensure(array, py::array::c_style);
    std::vector<TensorImpl::StridesType> strides(rank);
    if (rank > 0) {
      ErrorLogCapture logs;
      check_ok(::executorch::runtime::dim_order_to_stride(
                   sizes.data(), dim_order.data(), rank, strides.data()),
               input_context(index),
               logs);
    }
    // The tensor borrows the array's data (read-only arrays are fine: inputs
    // are only read); input_arrays_ keeps it alive.
    input_tensors_.push_back(::executorch::extension::make_tensor_ptr(
        std::move(sizes),
        const_cast<void*>(array.data()),
        std::move(dim_order),
        std::move(strides),
        *dtype,
        TensorShapeDynamism::STATIC));
    input_arrays_.push_back(std::move(array));
    return EValue(*input_tensors_.back());
  }

  static py::object tensor_to_python(const Tensor& tensor) {
    const std::optional<py::dtype> dtype = numpy_dtype_of(tensor.scalar_type());
    const py::dtype array_dtype =
        dtype ? *dtype : bits_dtype_of(tensor.scalar_type());
    std::vector<py::ssize_t> shape;
    std::vector<py::ssize_t> strides;
    for (ssize_t d = 0; d < tensor.dim(); ++d) {
      shape.push_back(tensor.size(d));
      strides.push_back(static_cast<py::ssize_t>(tensor.strides()[d]) *
                        tensor.element_size());
    }
    // A fresh array with the tensor's strides has the same dense layout as
    // the tensor's storage, so one copy keeps the dim order (a channels-last
    // output stays channels-last) and frees the result from the method's
    // memory.
    py::array array(array_dtype, shape, strides);
    if (tensor.nbytes() > 0) {
      std::memcpy(
          array.mutable_data(), tensor.const_data_ptr(), tensor.nbytes());
    }
    if (dtype) {
      return std::move(array);
    }
    return py::cast(TypedArray{std::move(array), tensor.scalar_type()});
  }

  static py::object to_python(const EValue& value) {
    switch (value.tag) {
      case Tag::None:
        return py::none();
      case Tag::Int:
        return py::int_(value.toInt());
      case Tag::Double:
        return py::float_(value.toDouble());
      case Tag::Bool:
        return py::bool_(value.toBool());
      case Tag::String:
        return py::str(valid_utf8(std::string(value.toString())));
      case Tag::Tensor:
        return tensor_to_python(value.toTensor());
      case Tag::ListInt:
        return py::cast(std::vector<int64_t>(value.toIntList().begin(),
                                             value.toIntList().end()));
      case Tag::ListDouble:
        return py::cast(std::vector<double>(value.toDoubleList().begin(),
                                            value.toDoubleList().end()));
      case Tag::ListBool: {
        py::list list;
        for (bool b : value.toBoolList()) {
          list.append(py::bool_(b));
        }
        return std::move(list);
      }
      case Tag::ListTensor: {
        py::list list;
        for (const Tensor& t : value.toTensorList()) {
          list.append(tensor_to_python(t));
        }
        return std::move(list);
      }
      case Tag::ListOptionalTensor: {
        py::list list;
        for (const auto& t : value.toListOptionalTensor()) {
          list.append(t ? tensor_to_python(*t) : py::none());
        }
        return std::move(list);
      }
      default:
        break;
    }
    throw std::runtime_error(std::string("Output of kind ") +
                             ::executorch::runtime::tag_to_string(value.tag) +
                             " cannot be converted to Python");
  }

  std::shared_ptr<ProgramState> program_;
  std::string name_;
  // With share_memory_arenas: this method's planned memory over the
  // program's shared buffers (declared before module_, which uses it).
  std::unique_ptr<::executorch::extension::PlannedMemory> planned_;
  Module module_;
  // Owned by module_.
  Method* method_ = nullptr;
  // The inputs of the last set_inputs: unplanned inputs borrow their data.
  std::vector<py::array> input_arrays_;
  std::vector<TensorPtr> input_tensors_;
  mutable std::mutex mutex_;
};

// Python handle of a loaded program.
struct PyProgram {
  std::shared_ptr<ProgramState> state;

  size_t num_methods() const {
    return state->program->num_methods();
  }

  std::string get_method_name(size_t index) const {
    ErrorLogCapture logs;
    return valid_utf8(unwrap(state->program->get_method_name(index),
                             "Method index " + std::to_string(index) +
                                 " of program from " + state->origin,
                             logs));
  }

  std::vector<std::string> method_names() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < num_methods(); ++i) {
      names.push_back(get_method_name(i));
    }
    return names;
  }

  bool has_etdump() const {
    return state->tracing != nullptr;
  }

  // Writes the ETDump of everything run so far (and the logged values, to
  // debug_buffer_path).
  void write_etdump_result_to_file(
      const std::string& path,
      const std::optional<std::string>& debug_buffer_path) const {
    if (!state->tracing) {
      throw std::runtime_error(
          "No ETDump: load the program with enable_etdump=True");
    }
    state->tracing->write(path, debug_buffer_path);
  }
};

std::string tensor_info_repr(const TensorInfo& info) {
  std::string sizes;
  for (int32_t size : info.sizes()) {
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
  }
  return "TensorInfo(sizes=[" + sizes +
         "], dtype=" + dtype_name(info.scalar_type()) + ", is_memory_planned=" +
         (info.is_memory_planned() ? "True" : "False") +
         ", nbytes=" + std::to_string(info.nbytes()) + ")";
}

std::string method_meta_repr(const MethodMeta& meta) {
  return "MethodMeta(name='" + std::string(meta.name()) +
         "', num_inputs=" + std::to_string(meta.num_inputs()) +
         ", num_outputs=" + std::to_string(meta.num_outputs()) +
         ", num_memory_planned_buffers=" +
         std::to_string(meta.num_memory_planned_buffers()) + ")";
}

PyTensorInfo tensor_meta(const PyMethodMeta& self, size_t index, bool input) {
  ErrorLogCapture logs;
  const std::string what = "Method '" + std::string(self.meta.name()) + "' " +
                           (input ? "input " : "output ") +
                           std::to_string(index);
  return PyTensorInfo{self.program,
                      unwrap(input ? self.meta.input_tensor_meta(index)
                                   : self.meta.output_tensor_meta(index),
                             what,
                             logs)};
}

// The kernel library the module registers at import: "optimized" when it
// is built, unless the environment variable EXECUTORCH_KERNELS says
// "portable" (benchmarks and tests compare the two in separate processes;
// the registry holds one kernel per operator and dtype).
const std::string& kernel_library() {
  static const std::string library = [] {
    const char* choice = std::getenv("EXECUTORCH_KERNELS");
    const std::string wanted = choice != nullptr ? choice : "";
    if (!wanted.empty() && wanted != "optimized" && wanted != "portable") {
      throw std::runtime_error("EXECUTORCH_KERNELS is '" + wanted +
                               "'; expected 'optimized' or 'portable'");
    }
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
    return wanted == "portable" ? std::string("portable")
                                : std::string("optimized");
#else
    return std::string("portable");
#endif
  }();
  return library;
}

void register_libraries() {
  ErrorLogCapture logs;
  if (kernel_library() == "optimized") {
#ifdef EXECUTORCH_WITH_OPTIMIZED_KERNELS
    // The optimized kernels, and the portable ones for the other operators.
    check_ok(::executorch::kernels::register_optimized_kernels(),
             "Registering the optimized kernels",
             logs);
#endif
  } else {
    check_ok(::executorch::kernels::register_portable_kernels(),
             "Registering the portable kernels",
             logs);
  }
  check_ok(::executorch::kernels::register_prim_ops(),
           "Registering the prim ops",
           logs);
  check_ok(::executorch::kernels::register_quantized_kernels(),
           "Registering the quantized kernels",
           logs);
#ifdef EXECUTORCH_WITH_LLM_CUSTOM_OPS
  check_ok(::executorch::extension::llm::register_custom_ops(),
           "Registering the LLM custom operators",
           logs);
#endif
  check_ok(::executorch::backends::demo::register_demo_backend(),
           "Registering the BackendWithCompilerDemo backend",
           logs);
#ifdef EXECUTORCH_WITH_XNNPACK
  check_ok(::executorch::backends::xnnpack::register_xnnpack_backend(),
           "Registering the XNNPACK backend",
           logs);
#endif
}

} // namespace

// Log lines the runtime emits outside a capture go to stderr, as the default
// PAL would print them; inside one they become part of the exception.
extern "C" void et_pal_emit_log_message(et_timestamp_t timestamp,
                                        et_pal_log_level_t level,
                                        const char* filename,
                                        const char* function,
                                        size_t line,
                                        const char* message,
                                        size_t length) {
  (void)timestamp;
  (void)function;
  if ((level == kError || level == kFatal) &&
      ErrorLogCapture::record(message, length)) {
    return;
  }
  std::fprintf(stderr,
               "%c executorch:%s:%zu] %.*s\n",
               static_cast<char>(level),
               filename,
               line,
               static_cast<int>(length),
               message);
}

PYBIND11_MODULE(_portable_lib, m) {
  m.doc() =
      "Bindings of the ExecuTorch-compatible runtime with the portable "
      "kernels. Tensors are numpy arrays here; see portable_lib for the "
      "torch-facing API.";

  ::executorch::runtime::runtime_init();
  register_libraries();

  py::enum_<Program::Verification>(m, "Verification")
      .value("Minimal", Program::Verification::Minimal)
      .value("InternalConsistency", Program::Verification::InternalConsistency);

  py::class_<TypedArray>(m,
                         "TypedArray",
                         "Elements of an ExecuTorch dtype numpy has no type "
                         "for (e.g. BFloat16), stored as same-width unsigned "
                         "integers.")
      .def(py::init([](py::array array, int dtype) {
             const auto type = static_cast<ScalarType>(dtype);
             if (dtype < 0 ||
                 dtype >= static_cast<int>(ScalarType::NumOptions) ||
                 bits_dtype_of(type).itemsize() != array.itemsize()) {
               throw std::invalid_argument(
                   "TypedArray: dtype " + std::to_string(dtype) +
                   " does not match elements of " +
                   std::to_string(array.itemsize()) + " bytes");
             }
             return TypedArray{std::move(array), type};
           }),
           py::arg("array"),
           py::arg("dtype"))
      .def_readonly("array", &TypedArray::array)
      .def_property_readonly(
          "dtype",
          [](const TypedArray& t) { return static_cast<int>(t.dtype); })
      .def("__repr__", [](const TypedArray& t) {
        return "TypedArray(dtype=" + dtype_name(t.dtype) +
               ", array=" + std::string(py::repr(t.array)) + ")";
      });

  py::class_<PyTensorInfo>(m, "TensorInfo")
      .def("sizes",
           [](const PyTensorInfo& self) {
             return py::tuple(py::cast(std::vector<int32_t>(
                 self.info.sizes().begin(), self.info.sizes().end())));
           })
      .def("dim_order",
           [](const PyTensorInfo& self) {
             return py::tuple(py::cast(std::vector<int>(
                 self.info.dim_order().begin(), self.info.dim_order().end())));
           })
      .def("dtype",
           [](const PyTensorInfo& self) {
             return static_cast<int>(self.info.scalar_type());
           })
      .def("dtype_name",
           [](const PyTensorInfo& self) {
             return dtype_name(self.info.scalar_type());
           })
      .def("is_memory_planned",
           [](const PyTensorInfo& self) {
             return self.info.is_memory_planned();
           })
      .def("nbytes",
           [](const PyTensorInfo& self) { return self.info.nbytes(); })
      .def("__repr__", [](const PyTensorInfo& self) {
        return tensor_info_repr(self.info);
      });

  py::class_<PyMethodMeta>(m, "MethodMeta")
      .def("name",
           [](const PyMethodMeta& self) {
             return std::string(self.meta.name());
           })
      .def("num_inputs",
           [](const PyMethodMeta& self) { return self.meta.num_inputs(); })
      .def("num_outputs",
           [](const PyMethodMeta& self) { return self.meta.num_outputs(); })
      .def(
          "input_tensor_meta",
          [](const PyMethodMeta& self, size_t i) {
            return tensor_meta(self, i, true);
          },
          py::arg("index"))
      .def(
          "output_tensor_meta",
          [](const PyMethodMeta& self, size_t i) {
            return tensor_meta(self, i, false);
          },
          py::arg("index"))
      .def("num_memory_planned_buffers",
           [](const PyMethodMeta& self) {
             return self.meta.num_memory_planned_buffers();
           })
      .def(
          "memory_planned_buffer_size",
          [](const PyMethodMeta& self, size_t i) {
            ErrorLogCapture logs;
            return unwrap(self.meta.memory_planned_buffer_size(i),
                          "Method '" + std::string(self.meta.name()) +
                              "' planned buffer " + std::to_string(i),
                          logs);
          },
          py::arg("index"))
      .def(
          "num_instructions",
          [](const PyMethodMeta& self) { return self.meta.num_instructions(); })
      .def(
          "uses_backend",
          [](const PyMethodMeta& self, const std::string& name) {
            return self.meta.uses_backend(name.c_str());
          },
          py::arg("backend_name"))
      .def("__repr__", [](const PyMethodMeta& self) {
        return method_meta_repr(self.meta);
      });

  py::class_<MethodState, std::shared_ptr<MethodState>>(m, "Method")
      .def("name", &MethodState::name)
      .def("set_inputs", &MethodState::set_inputs, py::arg("inputs"))
      .def("execute", &MethodState::execute)
      .def("get_outputs", &MethodState::get_outputs)
      .def("call", &MethodState::call, py::arg("inputs"))
      .def("method_meta", &MethodState::method_meta)
      .def("step", &MethodState::step)
      .def("reset_execution", &MethodState::reset_execution)
      .def("reset_mutable_buffers", &MethodState::reset_mutable_buffers)
      .def("num_values", &MethodState::num_values)
      .def("set_max_instructions",
           &MethodState::set_max_instructions,
           py::arg("max_instructions"))
      .def("max_instructions", &MethodState::max_instructions)
      .def("load_bundled_input",
           &MethodState::load_bundled_input,
           py::arg("bundled_program"),
           py::arg("testset_idx"))
      .def("verify_bundled_outputs",
           &MethodState::verify_bundled_outputs,
           py::arg("bundled_program"),
           py::arg("testset_idx"),
           py::arg("rtol"),
           py::arg("atol"))
      .def("get_value", &MethodState::get_value, py::arg("index"));

  py::class_<PyProgram>(m, "Program")
      .def("num_methods", &PyProgram::num_methods)
      .def("get_method_name", &PyProgram::get_method_name, py::arg("index"))
      .def("method_names", &PyProgram::method_names)
      .def("has_etdump", &PyProgram::has_etdump)
      .def("write_etdump_result_to_file",
           &PyProgram::write_etdump_result_to_file,
           py::arg("path"),
           py::arg("debug_buffer_path") = py::none())
      .def(
          "method_meta",
          [](const PyProgram& self, const std::string& name) {
            return method_meta_of(self.state, name);
          },
          py::arg("method_name"))
      .def(
          "load_method",
          [](const PyProgram& self, const std::string& name) {
            return std::make_shared<MethodState>(self.state, name);
          },
          py::arg("method_name"));

  py::class_<PyBundledProgram>(m, "BundledProgram");

  m.attr("MAX_INSTRUCTIONS_FOR_UNTRUSTED_PROGRAMS") =
      Method::kMaxInstructionsForUntrustedPrograms;

  m.def(
      "_load_program",
      [](const std::string& path,
         Program::Verification verification,
         bool enable_etdump,
         size_t debug_buffer_size,
         bool share_memory_arenas,
         const std::optional<std::string>& data_path,
         size_t max_instructions) {
        PyProgram program{load_program_from_file(
            path, verification, {enable_etdump, debug_buffer_size})};
        program.state->share_memory_arenas = share_memory_arenas;
        program.state->max_instructions = max_instructions;
        program.state->data_path = data_path.value_or("");
        check_data_map(*program.state);
        return program;
      },
      py::arg("path"),
      py::arg("program_verification") = Program::Verification::Minimal,
      py::arg("enable_etdump") = false,
      py::arg("debug_buffer_size") = 0,
      py::arg("share_memory_arenas") = false,
      py::arg("data_path") = std::nullopt,
      py::arg("max_instructions") = 0,
      "Loads a .pte file (memory-mapped), with its external data from the "
      ".ptd file at data_path. Each method's execute runs at most "
      "max_instructions instructions (0: no limit).");
  m.def(
      "_load_program_from_buffer",
      [](const py::buffer& buffer,
         Program::Verification verification,
         bool enable_etdump,
         size_t debug_buffer_size,
         bool share_memory_arenas,
         const std::optional<py::buffer>& data_map_buffer,
         size_t max_instructions) {
        PyProgram program{load_program_from_buffer(
            buffer, verification, {enable_etdump, debug_buffer_size})};
        program.state->share_memory_arenas = share_memory_arenas;
        program.state->max_instructions = max_instructions;
        if (data_map_buffer) {
          const py::buffer_info info = data_map_buffer->request();
          const auto bytes = contiguous_bytes(info, "Loading a data file");
          program.state->data_bytes = aligned_copy(bytes.first, bytes.second);
          program.state->data_size = bytes.second;
        }
        check_data_map(*program.state);
        return program;
      },
      py::arg("buffer"),
      py::arg("program_verification") = Program::Verification::Minimal,
      py::arg("enable_etdump") = false,
      py::arg("debug_buffer_size") = 0,
      py::arg("share_memory_arenas") = false,
      py::arg("data_map_buffer") = std::nullopt,
      py::arg("max_instructions") = 0,
      "Loads a program from bytes (copied), with its external data from the "
      "bytes of a .ptd file (copied). Each method's execute runs at most "
      "max_instructions instructions (0: no limit).");
  m.def("_load_bundled_program_from_buffer",
        &load_bundled_program,
        py::arg("buffer"),
        "Loads a bundled program (.bpte bytes, copied and checked).");
  m.def(
      "_load_program_from_bundled_program",
      [](const PyBundledProgram& bundled,
         Program::Verification verification,
         bool enable_etdump,
         size_t debug_buffer_size) {
        return PyProgram{
            load_program_from_bytes(bundled.program,
                                    bundled.program_size,
                                    "a bundled program",
                                    verification,
                                    {enable_etdump, debug_buffer_size})};
      },
      py::arg("bundled_program"),
      py::arg("program_verification") = Program::Verification::Minimal,
      py::arg("enable_etdump") = false,
      py::arg("debug_buffer_size") = 0,
      "Loads the program inside a bundled program.");
  m.def(
      "_get_operator_names",
      []() {
        std::set<std::string> names;
        for (const auto& kernel :
             ::executorch::runtime::get_registered_kernels()) {
          names.emplace(kernel.name_);
        }
        return std::vector<std::string>(names.begin(), names.end());
      },
      "Names of the operators that have at least one registered kernel, "
      "sorted.");
  m.def(
      "_get_kernel_library",
      []() { return kernel_library(); },
      "The kernel library registered at import: 'optimized' (the optimized "
      "kernels, portable for the other operators) or 'portable' (when the "
      "optimized ones are not built, or EXECUTORCH_KERNELS=portable).");
#ifdef EXECUTORCH_WITH_THREADPOOL
  m.def(
      "_unsafe_reset_threadpool",
      [](uint32_t num_threads) {
        if (!::executorch::extension::threadpool::get_threadpool()
                 ->_unsafe_reset_threadpool(num_threads)) {
          throw std::runtime_error("could not create " +
                                   std::to_string(num_threads) + " threads");
        }
      },
      py::arg("num_threads"),
      "Replaces the process-wide thread pool's threads with num_threads (0: "
      "one per core). Only while no method is executing.");
  m.def(
      "_get_threadpool_thread_count",
      []() {
        return ::executorch::extension::threadpool::get_threadpool()
            ->get_thread_count();
      },
      "The number of threads of the process-wide pool (the caller "
      "included).");
#endif
  m.def("_get_registered_backend_names", []() {
    std::vector<std::string> names;
    for (size_t i = 0; i < ::executorch::runtime::get_num_registered_backends();
         ++i) {
      auto name = ::executorch::runtime::get_backend_name(i);
      if (name.ok()) {
        names.emplace_back(*name);
      }
    }
    return names;
  });
  m.def(
      "_is_available",
      [](const std::string& name) {
        auto* backend = ::executorch::runtime::get_backend_class(name.c_str());
        return backend != nullptr && backend->is_available();
      },
      py::arg("backend_name"));
}
