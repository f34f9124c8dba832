#pragma once

// Test helper: small valid program specs shared by the executor tests.
// Malformed-input tests start from these and change one field.

#include <executorch/runtime/testing/program_builder.h>

namespace executorch {
namespace runtime {
namespace testing {

// out = test::add_one(x) for a planned float [2, 2] input and output.
// Values: 0 = x (planned, offset 0), 1 = out (planned, offset 16).
// One planned buffer of 32 bytes.
MethodSpec add_one_method(const std::string& name = "forward");

// out = aten::add(x, w, alpha=2) with w a constant [2, 2] tensor
// {1, 2, 3, 4}. Values: 0 = x, 1 = w (constant 1), 2 = alpha (Int 2),
// 3 = out.
MethodSpec add_constant_method(const std::string& name = "add_constant");

ProgramSpec add_one_program();

// add_one_program whose instruction 1 always jumps back to instruction 0
// (JumpFalseCall on value 2, a Bool false): execute() never ends without
// an instruction budget.
ProgramSpec endless_loop_program();

// "forward": y = test::add_one(x), out = aten::add(y, y, alpha=1) for a
// planned float [2] input; two kernel calls. Values: 0 = x, 1 = y,
// 2 = alpha, 3 = out.
ProgramSpec two_kernel_program();

// Bytes of float values.
std::vector<uint8_t> float_bytes(const std::vector<float>& values);

} // namespace testing
} // namespace runtime
} // namespace executorch
