// Program state of the Python bindings: a loaded program with the bytes or
// file it reads from, its external data (.ptd), its profiling (ETDump) and
// the Python-facing handles that keep it alive (PyProgram, PyMethodMeta,
// PyTensorInfo); the load functions for files, buffers and bundled programs.
//
// Ownership: a ProgramState is shared (std::shared_ptr) by its PyProgram, its
// loaded methods and its metadata objects, which point into it; it lives as
// long as the last of them. Buffers given to the load functions are copied,
// so callers may drop or change theirs.
//
// Threading: call with the GIL held. The methods of a program share its
// Tracing, whose mutex lets one of them run traced at a time.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
// Every file converting std containers sees the same casters (ODR).
#include <pybind11/stl.h>

#include <executorch/devtools/etdump/etdump_gen.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/pybindings/errors.h>
#include <executorch/runtime/executor/program.h>

namespace executorch::extension::pybindings {

namespace py = pybind11;
using ::executorch::etdump::ETDumpGen;
using ::executorch::etdump::ETDumpResult;
using ::executorch::runtime::DataLoader;
using ::executorch::runtime::MethodMeta;
using ::executorch::runtime::Program;
using ::executorch::runtime::Span;
using ::executorch::runtime::TensorInfo;

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
// A loaded program and the bytes it reads from. Shared by its methods and
// metadata objects, which point into it.
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

// A loader over the program's external data, or null without one.
std::unique_ptr<DataLoader> data_map_loader(const ProgramState& state);

// Checks the external data once at load, so that a wrong file is reported
// by the load call rather than by the first method load.
void check_data_map(const ProgramState& state);

std::shared_ptr<ProgramState> load_program_from_file(
    const std::string& path,
    Program::Verification verification,
    const TracingOptions& tracing);

// A copy of `size` bytes at `data`, aligned for a program.
std::unique_ptr<uint8_t, decltype(&std::free)> aligned_copy(const void* data,
                                                            size_t size);

// The bytes of a contiguous Python buffer.
std::pair<const void*, size_t> contiguous_bytes(const py::buffer_info& info,
                                                const char* what);

std::shared_ptr<ProgramState> load_program_from_bytes(
    const void* data,
    size_t size,
    const std::string& origin,
    Program::Verification verification,
    const TracingOptions& tracing);

std::shared_ptr<ProgramState> load_program_from_buffer(
    const py::buffer& buffer,
    Program::Verification verification,
    const TracingOptions& tracing);

// A bundled program (.bpte): its bytes, checked, kept for its test cases.
struct PyBundledProgram {
  std::shared_ptr<uint8_t> bytes;
  size_t size = 0;
  const void* program = nullptr;
  size_t program_size = 0;
};
PyBundledProgram load_bundled_program(const py::buffer& buffer);

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
                            const std::string& name);

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

} // namespace executorch::extension::pybindings
