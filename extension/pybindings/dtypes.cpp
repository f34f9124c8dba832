// numpy <-> ExecuTorch dtypes (dtypes.h).
#include <executorch/extension/pybindings/dtypes.h>

#include <stdexcept>

#include <executorch/runtime/core/exec_aten/util/scalar_type_util.h>

namespace executorch::extension::pybindings {

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

} // namespace executorch::extension::pybindings
