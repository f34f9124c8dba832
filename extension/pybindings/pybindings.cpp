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
//
// The parts: errors.h (log capture, exception text), dtypes.h (numpy <->
// ExecuTorch dtypes), program_state.h (loading programs, their data and
// profiling), method_state.h (running one method). This file registers the
// kernels and backends at import and defines the Python module.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <executorch/extension/pybindings/dtypes.h>
#include <executorch/extension/pybindings/errors.h>
#include <executorch/extension/pybindings/method_state.h>
#include <executorch/extension/pybindings/program_state.h>
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
#include <executorch/backends/demo/runtime/demo_backend.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/runtime.h>
#ifdef EXECUTORCH_WITH_XNNPACK
#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#endif

// The parts of the bindings (errors.h, dtypes.h, program_state.h,
// method_state.h); this file holds the module definition.
using namespace ::executorch::extension::pybindings;

namespace {

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
      "one per performant core). Only while no method is executing.");
  m.def(
      "_threadpool_get_thread_count",
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
