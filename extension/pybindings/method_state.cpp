// Running one loaded method from Python (method_state.h).
#include <executorch/extension/pybindings/method_state.h>

#include <stdexcept>

namespace executorch::extension::pybindings {

MethodState::MethodState(std::shared_ptr<ProgramState> program,
                         const std::string& name)
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

void MethodState::set_inputs(const py::sequence& inputs) {
  const auto held = lock();
  set_inputs_locked(inputs);
}

void MethodState::execute() {
  const auto held = lock();
  execute_locked();
}

py::list MethodState::get_outputs() const {
  const auto held = lock();
  return get_outputs_locked();
}

py::list MethodState::call(const py::sequence& inputs) {
  const auto held = lock();
  set_inputs_locked(inputs);
  execute_locked();
  return get_outputs_locked();
}

bool MethodState::step() {
  const auto held = lock();
  const auto traced = lock_tracer();
  ErrorLogCapture logs;
  Error status;
  {
    py::gil_scoped_release release;
    status = method_->step();
  }
  if (status == Error::EndOfMethod) {
    check_ok(
        method_->reset_execution(), "Resetting method " + quoted(name_), logs);
    return false;
  }
  if (status != Error::Ok) {
    // Like execute: a failed run starts over on the next call.
    (void)method_->reset_execution();
  }
  check_ok(status, "Stepping method " + quoted(name_), logs);
  return true;
}

void MethodState::reset_execution() {
  const auto held = lock();
  ErrorLogCapture logs;
  check_ok(
      method_->reset_execution(), "Resetting method " + quoted(name_), logs);
}

void MethodState::reset_mutable_buffers() {
  const auto held = lock();
  ErrorLogCapture logs;
  check_ok(method_->reset_mutable_buffers(),
           "Resetting the mutable buffers of method " + quoted(name_),
           logs);
}

void MethodState::set_max_instructions(size_t max_instructions) {
  const auto held = lock();
  module_.set_max_instructions(max_instructions);
}

void MethodState::load_bundled_input(const PyBundledProgram& bundled,
                                     size_t index) {
  const auto held = lock();
  ErrorLogCapture logs;
  check_ok(::executorch::bundled_program::load_bundled_input(
               *method_, bundled.bytes.get(), index),
           "Method " + quoted(name_) + ": loading bundled test case " +
               std::to_string(index),
           logs);
  if (program_->tracing) {
    program_->tracing->etdump.set_bundled_input_index(static_cast<int>(index));
  }
}

void MethodState::verify_bundled_outputs(const PyBundledProgram& bundled,
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

py::object MethodState::get_value(size_t index) const {
  const auto held = lock();
  if (index >= method_->values_size()) {
    throw py::index_error("Method " + quoted(name_) + " has " +
                          std::to_string(method_->values_size()) +
                          " values; value " + std::to_string(index) +
                          " is out of range");
  }
  return to_python(method_->get_value(index));
}

std::unique_lock<std::mutex> MethodState::lock() const {
  py::gil_scoped_release release;
  return std::unique_lock<std::mutex>(mutex_);
}

std::unique_lock<std::mutex> MethodState::lock_tracer() const {
  if (!program_->tracing) {
    return std::unique_lock<std::mutex>();
  }
  py::gil_scoped_release release;
  return std::unique_lock<std::mutex>(program_->tracing->mutex);
}

void MethodState::set_inputs_locked(const py::sequence& inputs) {
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

void MethodState::execute_locked() {
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

py::list MethodState::get_outputs_locked() const {
  py::list outputs;
  for (size_t i = 0; i < method_->outputs_size(); ++i) {
    outputs.append(to_python(method_->get_output(i)));
  }
  return outputs;
}

EValue MethodState::to_evalue(const py::handle& value, size_t index) {
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

EValue MethodState::to_tensor(const py::handle& value,
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
  input_tensors_.push_back(
      ::executorch::extension::make_tensor_ptr(std::move(sizes),
                                               const_cast<void*>(array.data()),
                                               std::move(dim_order),
                                               std::move(strides),
                                               *dtype,
                                               TensorShapeDynamism::STATIC));
  input_arrays_.push_back(std::move(array));
  return EValue(*input_tensors_.back());
}

py::object MethodState::tensor_to_python(const Tensor& tensor) {
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
    std::memcpy(array.mutable_data(), tensor.const_data_ptr(), tensor.nbytes());
  }
  if (dtype) {
    return std::move(array);
  }
  return py::cast(TypedArray{std::move(array), tensor.scalar_type()});
}

py::object MethodState::to_python(const EValue& value) {
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

} // namespace executorch::extension::pybindings
