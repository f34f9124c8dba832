#include <executorch/runtime/executor/method.h>

#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/method_harness.h>
#include <executorch/runtime/testing/owned_tensor.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;

namespace {

class MethodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }

  std::vector<float> output_floats(size_t index = 0) {
    const Tensor& out = harness_.method().get_output(index).toTensor();
    const float* data = out.const_data_ptr<float>();
    return std::vector<float>(data, data + out.numel());
  }

  MethodHarness harness_;
};

// x, cond -> out: out = 2x, then (if cond) out = x + 1.
// Values: 0 = x, 1 = cond, 2 = alpha (1), 3 = out.
MethodSpec branch_method(ValueSpec cond) {
  MethodSpec m;
  m.values = {ValueSpec::Tensor(planned_float({2}, 0)),
              std::move(cond),
              ValueSpec::Int(1),
              ValueSpec::Tensor(planned_float({2}, 16))};
  m.inputs = {0, 1};
  m.outputs = {3};
  m.operators = {{"aten::add", "out"}, {"test::add_one", "out"}};
  m.chains = {{InstructionSpec::Kernel(0, {0, 0, 2, 3, 3}),
               InstructionSpec::JumpFalse(1, 3),
               InstructionSpec::Kernel(1, {0, 3, 3}),
               InstructionSpec::Free(0)}};
  m.non_const_buffer_sizes = {0, 32};
  return m;
}

TEST_F(MethodTest, RunsKernelCall) {
  ASSERT_EQ(harness_.load(add_one_program()), Error::Ok);
  Method& method = harness_.method();
  EXPECT_EQ(method.inputs_size(), 1u);
  EXPECT_EQ(method.outputs_size(), 1u);
  EXPECT_EQ(method.values_size(), 2u);
  EXPECT_STREQ(method.method_meta().name(), "forward");

  OwnedTensor x = float_tensor({2, 2}, {1, 2, 3, 4});
  ASSERT_EQ(method.set_input(x.tensor(), 0), Error::Ok);
  ASSERT_EQ(method.execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{2, 3, 4, 5}));

  // Running again with new input data.
  OwnedTensor y = float_tensor({2, 2}, {10, 20, 30, 40});
  ASSERT_EQ(method.set_inputs(ArrayRef<EValue>(EValue(y.tensor()))), Error::Ok);
  ASSERT_EQ(method.execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{11, 21, 31, 41}));

  EValue outputs[1];
  ASSERT_EQ(method.get_outputs(outputs, 1), Error::Ok);
  EXPECT_EQ(outputs[0].toTensor().const_data_ptr<float>()[0], 11.0f);
  EXPECT_EQ(method.get_outputs(outputs, 0), Error::InvalidArgument);
  EValue inputs[1];
  ASSERT_EQ(method.get_inputs(inputs, 1), Error::Ok);
  EXPECT_EQ(inputs[0].toTensor().const_data_ptr<float>()[0], 10.0f);
}

TEST_F(MethodTest, StepRunsOneInstructionAtATime) {
  ASSERT_EQ(harness_.load(add_one_program()), Error::Ok);
  Method& method = harness_.method();
  OwnedTensor x = float_tensor({2, 2}, {1, 2, 3, 4});
  ASSERT_EQ(method.set_input(x.tensor(), 0), Error::Ok);
  EXPECT_EQ(method.step(), Error::Ok);
  EXPECT_EQ(method.step(), Error::EndOfMethod);
  EXPECT_EQ(output_floats(), (std::vector<float>{2, 3, 4, 5}));
  ASSERT_EQ(method.reset_execution(), Error::Ok);
  EXPECT_EQ(method.step(), Error::Ok);
}

TEST_F(MethodTest, ReadsConstantTensors) {
  ProgramSpec spec;
  spec.methods = {add_constant_method("forward")};
  spec.constants = {float_bytes({1, 2, 3, 4})};
  for (bool inline_constants : {false, true}) {
    spec.inline_constants = inline_constants;
    MethodHarness harness;
    ASSERT_EQ(harness.load(spec), Error::Ok);
    OwnedTensor x = float_tensor({2, 2}, {10, 10, 10, 10});
    ASSERT_EQ(harness.method().set_input(x.tensor(), 0), Error::Ok);
    ASSERT_EQ(harness.method().execute(), Error::Ok);
    const float* out =
        harness.method().get_output(0).toTensor().const_data_ptr<float>();
    EXPECT_EQ(std::vector<float>(out, out + 4),
              (std::vector<float>{12, 14, 16, 18}));
  }
}

TEST_F(MethodTest, LoadsEachOfSeveralMethods) {
  ProgramSpec spec;
  spec.methods = {add_one_method("forward"), add_constant_method("other")};
  spec.constants = {float_bytes({1, 1, 1, 1})};
  ASSERT_EQ(harness_.load_program(spec), Error::Ok);
  EXPECT_EQ(harness_.program().num_methods(), 2u);
  EXPECT_STREQ(*harness_.program().get_method_name(1), "other");
  OwnedTensor x = float_tensor({2, 2}, {1, 2, 3, 4});
  ASSERT_EQ(harness_.load_method("other"), Error::Ok);
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{3, 4, 5, 6}));
  ASSERT_EQ(harness_.load_method("forward"), Error::Ok);
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(harness_.load_method("missing"), Error::InvalidArgument);
}

TEST_F(MethodTest, MoveCallCopiesValues) {
  MethodSpec m;
  m.values = {ValueSpec::Int(0), ValueSpec::Int(0)};
  m.inputs = {0};
  m.outputs = {1};
  m.chains = {{InstructionSpec::Move(0, 1)}};
  ProgramSpec spec;
  spec.methods = {m};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  ASSERT_EQ(harness_.method().set_input(EValue(int64_t(42)), 0), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(harness_.method().get_output(0).toInt(), 42);
}

TEST_F(MethodTest, JumpFalseOnBoolValue) {
  ProgramSpec spec;
  spec.methods = {branch_method(ValueSpec::Bool(true))};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  OwnedTensor x = float_tensor({2}, {3, 5});
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);

  ASSERT_EQ(harness_.method().set_input(EValue(true), 1), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{4, 6}));

  ASSERT_EQ(harness_.method().set_input(EValue(false), 1), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{6, 10}));
}

TEST_F(MethodTest, JumpFalseOnBoolTensorBorrowsUnplannedInput) {
  TensorSpec cond;
  cond.dtype = ScalarType::Bool;
  cond.sizes = {1};
  ProgramSpec spec;
  spec.methods = {branch_method(ValueSpec::Tensor(cond))};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  OwnedTensor x = float_tensor({2}, {3, 5});
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
  // The condition is unplanned, so execute() refuses to run without it.
  EXPECT_EQ(harness_.method().execute(), Error::InvalidState);

  OwnedTensor flag(ScalarType::Bool, {1}, std::vector<uint8_t>{1});
  ASSERT_EQ(harness_.method().set_input(flag.tensor(), 1), Error::Ok);
  EXPECT_EQ(harness_.method().get_input(1).toTensor().const_data_ptr(),
            flag.tensor().const_data_ptr());
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{4, 6}));

  flag.tensor().mutable_data_ptr<uint8_t>()[0] = 0;
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{6, 10}));
}

TEST_F(MethodTest, JumpFalseOnNonBoolFailsAtRunTime) {
  ProgramSpec spec;
  spec.methods = {branch_method(ValueSpec::Int(1))};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  OwnedTensor x = float_tensor({2}, {3, 5});
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
  EXPECT_EQ(harness_.method().execute(), Error::InvalidProgram);
}

TEST_F(MethodTest, KernelFailureIsReportedAndMethodCanRerun) {
  ProgramSpec spec = add_one_program();
  spec.methods[0].operators = {{"test::fail", "out"}};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  OwnedTensor x = float_tensor({2, 2}, {1, 2, 3, 4});
  ASSERT_EQ(harness_.method().set_input(x.tensor(), 0), Error::Ok);
  {
    LogCapture logs;
    EXPECT_EQ(harness_.method().execute(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains(
        {"instruction 0", "test::fail.out", "forward", "InvalidArgument"}));
  }
  EXPECT_EQ(harness_.method().execute(), Error::InvalidArgument);
}

TEST_F(MethodTest, RejectsBadInputs) {
  ASSERT_EQ(harness_.load(add_one_program()), Error::Ok);
  Method& method = harness_.method();
  OwnedTensor good = float_tensor({2, 2}, {1, 2, 3, 4});
  LogCapture logs;
  // Index out of range.
  EXPECT_EQ(method.set_input(good.tensor(), 1), Error::InvalidArgument);
  // Wrong kind of value.
  EXPECT_EQ(method.set_input(EValue(int64_t(1)), 0), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"input 0", "expected Tensor", "got Int"}));
  // Wrong dtype.
  OwnedTensor ints(ScalarType::Int, {2, 2}, std::vector<int32_t>{1, 2, 3, 4});
  EXPECT_EQ(method.set_input(ints.tensor(), 0), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"input 0", "dtype", "Float", "Int"}));
  // Wrong rank.
  OwnedTensor flat = float_tensor({4}, {1, 2, 3, 4});
  EXPECT_EQ(method.set_input(flat.tensor(), 0), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"input 0", "expected rank 2, got rank 1"}));
  // Wrong sizes for a static input.
  OwnedTensor wide = float_tensor({1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(method.set_input(wide.tensor(), 0), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"input 0", "expected size 2, got 1"}));
  // Wrong number of inputs.
  EXPECT_EQ(method.set_inputs(ArrayRef<EValue>()), Error::InvalidArgument);
  // The method still works with a good input.
  ASSERT_EQ(method.set_input(good.tensor(), 0), Error::Ok);
  EXPECT_EQ(method.execute(), Error::Ok);
}

TEST_F(MethodTest, DynamicBoundInputResizesWithinItsBound) {
  ProgramSpec spec = add_one_program();
  spec.methods[0].values[0].tensor.sizes = {4};
  spec.methods[0].values[0].tensor.dynamism =
      TensorShapeDynamism::DYNAMIC_BOUND;
  spec.methods[0].values[1].tensor.sizes = {4};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  OwnedTensor small = float_tensor({2}, {1, 2});
  ASSERT_EQ(harness_.method().set_input(small.tensor(), 0), Error::Ok);
  EXPECT_EQ(harness_.method().get_input(0).toTensor().size(0), 2);
  OwnedTensor big = float_tensor({5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(harness_.method().set_input(big.tensor(), 0),
            Error::InvalidArgument);
}

TEST_F(MethodTest, InputAboveItsBoundNamesInputDimBoundAndSize) {
  // Bounds [2, 2]: a [1, 4] input has the planned element count but its dim
  // 1 is above the bound; it is rejected before any byte is copied.
  ProgramSpec spec = add_one_program();
  spec.methods[0].values[0].tensor.dynamism =
      TensorShapeDynamism::DYNAMIC_BOUND;
  spec.methods[0].values[1].tensor.dynamism =
      TensorShapeDynamism::DYNAMIC_BOUND;
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  Method& method = harness_.method();
  const Tensor& planned = method.get_input(0).toTensor();
  float* data = planned.mutable_data_ptr<float>();
  std::vector<float> before(data, data + 4);
  LogCapture logs;
  OwnedTensor wide = float_tensor({1, 4}, {5, 6, 7, 8});
  EXPECT_EQ(method.set_input(wide.tensor(), 0), Error::InvalidArgument);
  EXPECT_TRUE(
      logs.contains({"input 0", "size 4 at dim 1", "above its upper bound 2"}));
  EXPECT_EQ(std::vector<float>(data, data + 4), before);
  EXPECT_EQ(planned.size(0), 2);
  EXPECT_EQ(planned.size(1), 2);
  // Within the bounds it runs at the given shape.
  OwnedTensor small = float_tensor({1, 2}, {1, 2});
  ASSERT_EQ(method.set_input(small.tensor(), 0), Error::Ok);
  EXPECT_EQ(method.get_input(0).toTensor().size(0), 1);
}

TEST_F(MethodTest, UnplannedOutputNeedsCallerBuffer) {
  ProgramSpec spec = add_one_program();
  spec.methods[0].values[1].tensor.planned = false;
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  Method& method = harness_.method();
  OwnedTensor x = float_tensor({2, 2}, {1, 2, 3, 4});
  ASSERT_EQ(method.set_input(x.tensor(), 0), Error::Ok);
  EXPECT_EQ(method.execute(), Error::InvalidState);
  float out[4] = {};
  EXPECT_EQ(method.set_output_data_ptr(out, 8, 0), Error::InvalidArgument);
  EXPECT_EQ(method.set_output_data_ptr(out, sizeof(out), 1),
            Error::InvalidArgument);
  ASSERT_EQ(method.set_output_data_ptr(out, sizeof(out), 0), Error::Ok);
  ASSERT_EQ(method.execute(), Error::Ok);
  EXPECT_EQ(out[3], 5.0f);
}

TEST_F(MethodTest, PlannedOutputBufferCannotBeReplaced) {
  ASSERT_EQ(harness_.load(add_one_program()), Error::Ok);
  float out[4] = {};
  EXPECT_EQ(harness_.method().set_output_data_ptr(out, sizeof(out), 0),
            Error::InvalidState);
}

TEST_F(MethodTest, ParsesEveryValueKind) {
  MethodSpec m = add_one_method();
  // Values 0 and 1 are the tensors; add scalars and lists after them.
  m.values.push_back(ValueSpec::Int(7));                      // 2
  m.values.push_back(ValueSpec::Int(9));                      // 3
  m.values.push_back(ValueSpec::IntList({2, 3}));             // 4
  m.values.push_back(ValueSpec::TensorList({0, 1}));          // 5
  m.values.push_back(ValueSpec::OptionalTensorList({0, -1})); // 6
  m.values.push_back(ValueSpec::DoubleList({0.5, 1.5}));      // 7
  m.values.push_back(ValueSpec::BoolList({true, false}));     // 8
  m.values.push_back(ValueSpec::String("hello"));             // 9
  m.values.push_back(ValueSpec::Double(2.5));                 // 10
  m.values.push_back(ValueSpec::None());                      // 11
  m.values.push_back(ValueSpec::Bool(true));                  // 12
  ProgramSpec spec;
  spec.methods = {m};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  const Method& method = harness_.method();
  EXPECT_EQ(method.get_value(4).toIntList().size(), 2u);
  EXPECT_EQ(method.get_value(4).toIntList()[1], 9);
  EXPECT_EQ(method.get_value(5).toTensorList().size(), 2u);
  auto optionals = method.get_value(6).toListOptionalTensor();
  EXPECT_TRUE(optionals[0].has_value());
  EXPECT_FALSE(optionals[1].has_value());
  EXPECT_EQ(method.get_value(7).toDoubleList()[1], 1.5);
  EXPECT_FALSE(method.get_value(8).toBoolList()[1]);
  EXPECT_EQ(method.get_value(9).toString(), "hello");
  EXPECT_EQ(method.get_value(10).toDouble(), 2.5);
  EXPECT_TRUE(method.get_value(11).isNone());
  EXPECT_TRUE(method.get_value(12).toBool());
}

TEST_F(MethodTest, KernelCanWriteScalarOutputs) {
  MethodSpec m;
  m.values = {ValueSpec::Int(5), ValueSpec::Int(0)};
  m.inputs = {0};
  m.outputs = {1};
  m.operators = {{"test::set_int", "out"}};
  m.chains = {{InstructionSpec::Kernel(0, {0, 1})}};
  ProgramSpec spec;
  spec.methods = {m};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(harness_.method().get_output(0).toInt(), 5);
}

// x -> out = x * scale, the scale being value 1: a constant, or (with
// `scale_is_input`) an input, or (`scale_written`) written by an earlier
// kernel from value 3.
ProgramSpec scale_program(double scale,
                          bool scale_is_input = false,
                          bool scale_written = false) {
  MethodSpec m;
  m.values = {ValueSpec::Tensor(planned_float({2}, 0)),
              ValueSpec::Double(scale),
              ValueSpec::Tensor(planned_float({2}, 16)),
              ValueSpec::Double(2.0)};
  m.inputs = {0};
  if (scale_is_input) {
    m.inputs.push_back(1);
  }
  m.outputs = {2};
  m.operators = {{"test::scale", "out"}};
  if (scale_written) {
    m.chains = {{InstructionSpec::Move(3, 1),
                 InstructionSpec::Kernel(0, {0, 1, 2, 2})}};
  } else {
    m.chains = {{InstructionSpec::Kernel(0, {0, 1, 2, 2})}};
  }
  m.non_const_buffer_sizes = {0, 32};
  ProgramSpec spec;
  spec.methods = {m};
  return spec;
}

TEST_F(MethodTest, ConstantArgumentsTheKernelRefusesFailTheLoad) {
  {
    LogCapture logs;
    EXPECT_EQ(harness_.load(scale_program(0.0)), Error::InvalidProgram);
    EXPECT_TRUE(logs.contains({"test::scale.out: scale 0 is not > 0"}));
    EXPECT_TRUE(logs.contains({"forward",
                               "instruction 0",
                               "test::scale.out",
                               "constant arguments"}));
  }
  MethodHarness valid;
  ASSERT_EQ(valid.load(scale_program(3.0)), Error::Ok);
  OwnedTensor x = float_tensor({2}, {1, 2});
  ASSERT_EQ(valid.method().set_input(x.tensor(), 0), Error::Ok);
  ASSERT_EQ(valid.method().execute(), Error::Ok);
  const Tensor& out = valid.method().get_output(0).toTensor();
  EXPECT_EQ(out.const_data_ptr<float>()[1], 6.0f);
}

TEST_F(MethodTest, ArgumentsSetAtRunTimeAreLeftToTheKernel) {
  // An input, or a value a move writes, is not checked at load (its value
  // there is a placeholder); the kernel checks it at each call.
  MethodHarness from_input;
  EXPECT_EQ(from_input.load(scale_program(0.0, /*scale_is_input=*/true)),
            Error::Ok);
  MethodHarness moved;
  ASSERT_EQ(moved.load(scale_program(0.0, false, /*scale_written=*/true)),
            Error::Ok);
  OwnedTensor x = float_tensor({2}, {1, 2});
  ASSERT_EQ(moved.method().set_input(x.tensor(), 0), Error::Ok);
  ASSERT_EQ(moved.method().execute(), Error::Ok);
  EXPECT_EQ(moved.method().get_output(0).toTensor().const_data_ptr<float>()[1],
            4.0f);
}

TEST_F(MethodTest, PlannedTensorLoadsInitialStateFromMutableSegment) {
  ProgramSpec spec = add_one_program();
  spec.mutable_data = {float_bytes({7, 8, 9, 10})};
  // The input doubles as a mutable buffer whose initial state is stored.
  spec.methods[0].values[0].tensor.data_buffer_idx = 1;
  spec.methods[0].inputs = {};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  ASSERT_EQ(harness_.method().execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{8, 9, 10, 11}));

  // An index past the mutable data is rejected at load.
  spec.methods[0].values[0].tensor.data_buffer_idx = 2;
  LogCapture logs;
  EXPECT_EQ(harness_.load(spec), Error::InvalidProgram);
  EXPECT_TRUE(logs.contains({"value 0", "mutable tensor"}));
}

TEST_F(MethodTest, ResetMutableBuffersCopiesTheInitialStateBackIn) {
  ProgramSpec spec = add_one_program();
  spec.mutable_data = {float_bytes({7, 8, 9, 10})};
  spec.methods[0].values[0].tensor.data_buffer_idx = 1;
  spec.methods[0].inputs = {};
  ASSERT_EQ(harness_.load(spec), Error::Ok);
  Method& method = harness_.method();
  float* state = method.get_value(0).toTensor().mutable_data_ptr<float>();
  state[0] = 100;
  ASSERT_EQ(method.execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{101, 9, 10, 11}));
  ASSERT_EQ(method.reset_mutable_buffers(), Error::Ok);
  EXPECT_EQ(state[0], 7);
  ASSERT_EQ(method.execute(), Error::Ok);
  EXPECT_EQ(output_floats(), (std::vector<float>{8, 9, 10, 11}));
}

} // namespace
