// Loading programs, their external data and bundled programs
// (program_state.h).
#include <executorch/extension/pybindings/program_state.h>

#include <stdexcept>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>
#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>

namespace executorch::extension::pybindings {

using ::executorch::extension::BufferDataLoader;
using ::executorch::extension::MmapDataLoader;

namespace {

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

} // namespace

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
    unwrap(
        ::executorch::extension::FlatTensorDataMap::load(loader.get()),
        "Loading data file " +
            (state.data_bytes ? "from a buffer of " +
                                    std::to_string(state.data_size) + " bytes"
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
PyMethodMeta method_meta_of(const std::shared_ptr<ProgramState>& program,
                            const std::string& name) {
  ErrorLogCapture logs;
  return PyMethodMeta{
      program,
      unwrap(program->program->method_meta(name.c_str()),
             "Method " + quoted(name) + " of program from " + program->origin,
             logs)};
}
} // namespace executorch::extension::pybindings
