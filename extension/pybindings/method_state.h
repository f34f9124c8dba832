// MethodState: one loaded method of a program, as the Python bindings
// run it. A Module over the shared ProgramState gives the method its
// planned memory (or the program's shared arenas), allocators and buffers
// for unplanned outputs; this class adds the locking, the numpy <-> EValue
// conversions and the error messages Python needs.
//
// Ownership: holds a share of its ProgramState. Outputs are copied out of
// the method's memory, so they stay valid after the next run; unplanned
// inputs borrow the caller's arrays until the next set_inputs.
//
// Threading: every entry point takes the method's mutex (waiting with the
// GIL released), and execute runs with the GIL released, so other Python
// threads may run meanwhile; traced runs also take the program's tracer.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
// Every file converting std containers sees the same casters (ODR).
#include <pybind11/stl.h>

#include <executorch/devtools/bundled_program/bundled_program.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/pybindings/dtypes.h>
#include <executorch/extension/pybindings/errors.h>
#include <executorch/extension/pybindings/program_state.h>
#include <executorch/extension/tensor/tensor_ptr.h>
#include <executorch/runtime/core/exec_aten/util/dim_order_util.h>
#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch::extension::pybindings {

using ::executorch::aten::Tensor;
using ::executorch::aten::TensorImpl;
using ::executorch::aten::TensorShapeDynamism;
using ::executorch::extension::Module;
using ::executorch::extension::TensorPtr;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Method;
using ::executorch::runtime::Tag;

class MethodState {
 public:
  MethodState(std::shared_ptr<ProgramState> program, const std::string& name);

  MethodState(const MethodState&) = delete;
  MethodState& operator=(const MethodState&) = delete;

  const std::string& name() const {
    return name_;
  }

  // Each entry point takes the method's lock: a Method must not be used by
  // two threads at once, and execute() lets other Python threads run.
  void set_inputs(const py::sequence& inputs);

  void execute();

  py::list get_outputs() const;

  py::list call(const py::sequence& inputs);

  PyMethodMeta method_meta() const {
    return PyMethodMeta{program_, method_->method_meta()};
  }

  // Runs the method's next instruction; false once every instruction has
  // run (the next step starts over). Between steps, get_value reads the
  // values instructions wrote, before later ones reuse their memory.
  bool step();

  void reset_execution();

  void reset_mutable_buffers();

  size_t num_values() const {
    return method_->values_size();
  }

  void set_max_instructions(size_t max_instructions);

  size_t max_instructions() const {
    return module_.max_instructions();
  }

  // Sets the inputs of test case `index` of a bundled program.
  void load_bundled_input(const PyBundledProgram& bundled, size_t index);

  // Checks the last execution's outputs against test case `index`.
  void verify_bundled_outputs(const PyBundledProgram& bundled,
                              size_t index,
                              double rtol,
                              double atol);

  // A copy of value `index` of the method's value table.
  py::object get_value(size_t index) const;

 private:
  // Waits for the method with the GIL released: the holder may need the GIL
  // to finish, and waiting while holding it would deadlock.
  std::unique_lock<std::mutex> lock() const;

  // The program's tracer, when it has one, likewise.
  std::unique_lock<std::mutex> lock_tracer() const;

  void set_inputs_locked(const py::sequence& inputs);

  void execute_locked();

  py::list get_outputs_locked() const;

  std::string input_context(size_t index) const {
    return "Method " + quoted(name_) + " input " + std::to_string(index);
  }

  EValue to_evalue(const py::handle& value, size_t index);

  // Builds a tensor laid out in the dim order the method expects (so a
  // channels-last input needs no caller-side permute).
  EValue to_tensor(const py::handle& value,
                   size_t index,
                   const Tensor& expected);

  static py::object tensor_to_python(const Tensor& tensor);

  static py::object to_python(const EValue& value);

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

} // namespace executorch::extension::pybindings
