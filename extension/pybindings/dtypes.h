// dtypes of the Python bindings: the numpy dtype of each ExecuTorch
// ScalarType and back, and TypedArray, which carries the elements of a
// dtype numpy has no type for (BFloat16, the Float8 kinds) as same-width
// unsigned integers.
//
// Ownership and threading: plain functions and a value type; call them with
// the GIL held (they make numpy dtype objects).
#pragma once

#include <optional>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
// Every file converting std containers sees the same casters (ODR).
#include <pybind11/stl.h>

#include <executorch/runtime/core/exec_aten/exec_aten.h>

namespace executorch::extension::pybindings {

namespace py = pybind11;
using ::executorch::aten::ScalarType;

// The ExecuTorch dtype of a numpy dtype, if there is one.
std::optional<ScalarType> scalar_type_of(const py::dtype& dtype);

// The numpy dtype holding elements of `type`, if numpy has one.
std::optional<py::dtype> numpy_dtype_of(ScalarType type);

// Unsigned integers as wide as one element of `type`: how elements of a
// dtype numpy lacks are carried.
py::dtype bits_dtype_of(ScalarType type);

std::string dtype_name(ScalarType type);

// An array whose elements are of ExecuTorch dtype `dtype`, held as
// same-width unsigned integers; for dtypes numpy has no type for.
struct TypedArray {
  py::array array;
  ScalarType dtype;
};

} // namespace executorch::extension::pybindings
