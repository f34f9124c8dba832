#include <executorch/runtime/testing/test_programs.h>

#include <cstring>

namespace executorch {
namespace runtime {
namespace testing {

MethodSpec add_one_method(const std::string& name) {
  MethodSpec m;
  m.name = name;
  m.values = {ValueSpec::Tensor(planned_float({2, 2}, 0)),
              ValueSpec::Tensor(planned_float({2, 2}, 16))};
  m.inputs = {0};
  m.outputs = {1};
  m.operators = {{"test::add_one", "out"}};
  // The emitter passes the out argument and then the return value.
  m.chains = {{InstructionSpec::Kernel(0, {0, 1, 1})}};
  m.non_const_buffer_sizes = {0, 32};
  return m;
}

MethodSpec add_constant_method(const std::string& name) {
  TensorSpec weight;
  weight.sizes = {2, 2};
  weight.data_buffer_idx = 1;
  MethodSpec m;
  m.name = name;
  m.values = {ValueSpec::Tensor(planned_float({2, 2}, 0)),
              ValueSpec::Tensor(weight),
              ValueSpec::Int(2),
              ValueSpec::Tensor(planned_float({2, 2}, 16))};
  m.inputs = {0};
  m.outputs = {3};
  m.operators = {{"aten::add", "out"}};
  m.chains = {{InstructionSpec::Kernel(0, {0, 1, 2, 3, 3})}};
  m.non_const_buffer_sizes = {0, 32};
  return m;
}

ProgramSpec add_one_program() {
  ProgramSpec p;
  p.methods = {add_one_method()};
  return p;
}

ProgramSpec endless_loop_program() {
  ProgramSpec p = add_one_program();
  p.methods[0].values.push_back(ValueSpec::Bool(false));
  p.methods[0].chains[0].push_back(InstructionSpec::JumpFalse(2, 0));
  return p;
}

ProgramSpec two_kernel_program() {
  MethodSpec m;
  m.values = {ValueSpec::Tensor(planned_float({2}, 0)),
              ValueSpec::Tensor(planned_float({2}, 16)),
              ValueSpec::Int(1),
              ValueSpec::Tensor(planned_float({2}, 32))};
  m.inputs = {0};
  m.outputs = {3};
  m.operators = {{"test::add_one", "out"}, {"aten::add", "out"}};
  m.chains = {{InstructionSpec::Kernel(0, {0, 1, 1}),
               InstructionSpec::Kernel(1, {1, 1, 2, 3, 3})}};
  m.non_const_buffer_sizes = {0, 48};
  ProgramSpec p;
  p.methods = {m};
  return p;
}

std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

} // namespace testing
} // namespace runtime
} // namespace executorch
