#pragma once

// Running the test cases of a bundled program (.bpte): a .pte with, per
// method, inputs and expected outputs (devtools/bundled_program/schema).
//
//   const void* program; size_t program_size;
//   get_program_data(file, file_size, &program, &program_size);
//   ... Program::load over `program`, load_method(name) ...
//   load_bundled_input(method, file, test_case);
//   method.execute();
//   OutputMismatch worst;
//   Error ok = verify_method_outputs(method, file, test_case, 1e-5, 1e-8,
//                                    &worst);
//
// The file is untrusted: it is verified (every offset inside the buffer)
// before use, and each test case's values are checked against the method
// (count, dtypes, data sizes). Errors name the method, the test case and the
// value. The buffer must stay alive and unchanged while a method uses inputs
// borrowed from it (unplanned inputs point into it).
//
// Tests: devtools/bundled_program/bundled_program_test.cpp; .bpte files from
// upstream's tools in test/devtools/test_bundled_program.py.

#include <cstddef>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/executor/method.h>

namespace executorch {
namespace bundled_program {

using SerializedBundledProgram = const void;

// Whether `file_data` starts like a bundled program (identifier "BP08").
bool is_bundled_program(void* file_data, size_t file_data_len);

// The .pte inside a bundled program, or the data itself when it is not one.
ET_NODISCARD ::executorch::runtime::Error get_program_data(
    void* file_data,
    size_t file_data_len,
    const void** out_program_data,
    size_t* out_program_data_len);

// Sets the inputs of test case `testset_idx` of the method's suite.
ET_NODISCARD ::executorch::runtime::Error load_bundled_input(
    ::executorch::runtime::Method& method,
    SerializedBundledProgram* bundled_program_ptr,
    size_t testset_idx);

// The worst element of a comparison: the largest |actual - expected| among
// the elements outside tolerance (or, when all pass, overall).
struct OutputMismatch {
  size_t output_index = 0;
  size_t element_index = 0;
  double expected = 0;
  double actual = 0;
  // Elements outside tolerance, over all outputs, and elements compared.
  size_t num_mismatched = 0;
  size_t num_elements = 0;
};

// Compares the method's outputs with test case `testset_idx`'s expected
// outputs: |actual - expected| <= atol + rtol * |expected| for each element
// (NaN matches NaN; integers and bools compare the same way). Returns Ok or
// NotFound on a mismatch (logged with the worst element), or an error for a
// malformed file or a test case that does not fit the method.
ET_NODISCARD ::executorch::runtime::Error verify_method_outputs(
    ::executorch::runtime::Method& method,
    SerializedBundledProgram* bundled_program_ptr,
    size_t testset_idx,
    double rtol = 1e-5,
    double atol = 1e-8,
    OutputMismatch* worst = nullptr);

// Test cases in the method's suite (0 when the file has no suite for it).
ET_NODISCARD ::executorch::runtime::Result<size_t> num_test_cases(
    SerializedBundledProgram* bundled_program_ptr, const char* method_name);

} // namespace bundled_program
} // namespace executorch

namespace torch {
namespace executor {
namespace bundled_program {
using ::executorch::bundled_program::get_program_data;
using ::executorch::bundled_program::is_bundled_program;
using ::executorch::bundled_program::load_bundled_input;
using ::executorch::bundled_program::verify_method_outputs;
} // namespace bundled_program
} // namespace executor
} // namespace torch
