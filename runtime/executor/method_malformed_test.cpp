// Malformed programs: each gets its documented error and a log line naming
// what was wrong; none crashes.
//
// The classes of hostile input upstream ExecuTorch has had to fix, and the
// cases here that cover them (issue #15):
//   overflow of segment offset + size: SegmentOffsetPlusSizeOverflows,
//     SegmentOffsetMinusOne, SegmentSizeNear2To64
//   overflow of tensor nbytes: NbytesOverflows
//   overflow of data-loader bounds: data_loader_test.cpp RejectsOutOfRange*
//   out-of-range indices: FreeOutOfRange, ArgIndexOutOfRange,
//     InputIndexOutOfRange, OperatorIndexOutOfRange, DelegateIndexOutOfRange;
//     a delegate's data index: backend_delegate_test.cpp
//     BadDataReferencesAreRejected
//   dims of 2^31-1, 10,000 dims, negative dims: DimOfInt32Max,
//     TenThousandDims, NegativeSize; read through MethodMeta without a
//     load: program_test.cpp MethodMetaRefusesHostileSizes
//   100,000 memory plans or execution plans: HostileCountsTest below
//   a data buffer index past the constant table: ConstantIndexOutOfRange,
//     InlineConstantIndexOutOfRange
//   a dim order that is not a permutation: DimOrderNotPermutation
//   XNNPACK blobs (tensor flags, dims, node arities):
//     backends/xnnpack/test/xnnpack_malformed_test.cpp
// and what the runtime now also refuses: a kernel call whose arguments do
// not have the kinds or the count of its operator's schema
// (KernelArgumentOfWrongType, KernelCallWith*), a move that would change a
// value's type (MoveChangesAValuesType), a tensor without memory
// (TensorWithoutStorage), tensor data not aligned to its element size
// (PlannedOffsetMisaligned), a bool constant whose byte is not 0 or 1
// (BoolConstantByteNotZeroOrOne), a loop that cannot make progress
// (JumpBackWithoutProgress) and execution past a budget (BudgetTest).

#include <executorch/runtime/executor/method.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/method_harness.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;

namespace {

struct MalformedCase {
  const char* name;
  // Breaks a valid add_one program.
  std::function<void(ProgramSpec&)> mutate;
  Error expected;
  // Substrings one log line must contain.
  std::vector<std::string> log_parts;
};

void PrintTo(const MalformedCase& c, std::ostream* os) {
  *os << c.name;
}

class MethodMalformedTest : public ::testing::TestWithParam<MalformedCase> {
 protected:
  void SetUp() override {
    register_test_kernels();
  }
};

TEST_P(MethodMalformedTest, FailsWithSpecificError) {
  const MalformedCase& c = GetParam();
  ProgramSpec spec = add_one_program();
  c.mutate(spec);
  MethodHarness harness;
  LogCapture logs;
  EXPECT_EQ(harness.load(spec), c.expected);
  EXPECT_TRUE(logs.contains(c.log_parts));
}

MethodSpec& forward(ProgramSpec& p) {
  return p.methods[0];
}

TensorSpec& tensor0(ProgramSpec& p) {
  return forward(p).values[0].tensor;
}

// Gives the program a constant segment (segment 0) that nothing uses.
void with_constant_segment(ProgramSpec& p) {
  p.constants = {float_bytes({1, 2, 3, 4})};
}

const MalformedCase kCases[] = {
    {"ArgIndexOutOfRange",
     [](ProgramSpec& p) { forward(p).chains[0][0].args[1] = 7; },
     Error::InvalidProgram,
     {"forward", "instruction 0", "argument refers to value 7"}},
    {"NegativeArgIndex",
     [](ProgramSpec& p) { forward(p).chains[0][0].args[0] = -1; },
     Error::InvalidProgram,
     {"instruction 0", "value -1"}},
    {"InputIndexOutOfRange",
     [](ProgramSpec& p) { forward(p).inputs[0] = 2; },
     Error::InvalidProgram,
     {"input 0 refers to value 2"}},
    {"OutputIndexOutOfRange",
     [](ProgramSpec& p) { forward(p).outputs[0] = 100; },
     Error::InvalidProgram,
     {"output 0 refers to value 100"}},
    {"OperatorIndexOutOfRange",
     [](ProgramSpec& p) { forward(p).chains[0][0].a = 3; },
     Error::InvalidProgram,
     {"instruction 0", "op_index 3"}},
    {"OperatorMissing",
     [](ProgramSpec& p) {
       forward(p).operators[0] = {"test::nonexistent", "out"};
     },
     Error::OperatorMissing,
     {"forward", "instruction 0", "test::nonexistent.out", "kernel library"}},
    {"OperatorMissingSaysHowToSelectIt",
     [](ProgramSpec& p) {
       forward(p).operators[0] = {"test::nonexistent", "out"};
     },
     Error::OperatorMissing,
     {"To include 'test::nonexistent.out' in a selective build",
      "EXECUTORCH_SELECT_OPS_LIST",
      "EXECUTORCH_SELECT_OPS_MODEL"}},
    {"OperatorWithoutOverload",
     [](ProgramSpec& p) {
       forward(p).operators[0] = {"test::add_one", ""};
     },
     Error::OperatorMissing,
     {"'test::add_one'"}},
    {"IntListItemOutOfRange",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::IntList({9}));
     },
     Error::InvalidProgram,
     {"value 2", "list item 0 refers to value 9"}},
    {"IntListItemWrongType",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::IntList({0}));
     },
     Error::InvalidProgram,
     {"value 2", "type Tensor, expected Int"}},
    {"TensorListItemOutOfRange",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::TensorList({0, 5}));
     },
     Error::InvalidProgram,
     {"value 2", "list item 1 refers to value 5"}},
    {"TensorListForwardReference",
     [](ProgramSpec& p) {
       forward(p).values.insert(forward(p).values.begin(),
                                ValueSpec::TensorList({1}));
     },
     Error::InvalidProgram,
     {"value 0", "not an earlier value"}},
    {"OptionalTensorListWrongType",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::Int(1));
       forward(p).values.push_back(ValueSpec::OptionalTensorList({0, 2}));
     },
     Error::InvalidProgram,
     {"value 3", "expected Tensor or None"}},
    {"PlannedPastBuffer",
     [](ProgramSpec& p) { forward(p).values[1].tensor.offset = 20; },
     Error::InvalidProgram,
     {"value 1", "memory_id 1, offset 20, 16 bytes"}},
    {"PlannedOffsetMisaligned",
     [](ProgramSpec& p) { forward(p).values[1].tensor.offset = 2; },
     Error::InvalidProgram,
     {"value 1", "not aligned to its 4-byte elements"}},
    {"PlannedMemoryIdOutOfRange",
     [](ProgramSpec& p) { tensor0(p).memory_id = 4; },
     Error::InvalidProgram,
     {"value 0", "memory_id 4"}},
    {"PlannedMemoryIdZero",
     [](ProgramSpec& p) { tensor0(p).memory_id = 0; },
     Error::InvalidProgram,
     {"value 0", "memory_id is 0"}},
    {"UnknownScalarType",
     [](ProgramSpec& p) { tensor0(p).raw_dtype = 99; },
     Error::InvalidProgram,
     {"value 0", "unknown scalar_type 99"}},
    {"UndefinedScalarType",
     [](ProgramSpec& p) { tensor0(p).raw_dtype = 30; },
     Error::InvalidProgram,
     {"value 0", "unknown scalar_type 30"}},
    {"RankTooLarge",
     [](ProgramSpec& p) { tensor0(p).sizes = std::vector<int32_t>(17, 1); },
     Error::InvalidProgram,
     {"value 0", "rank 17"}},
    {"NegativeSize",
     [](ProgramSpec& p) {
       tensor0(p).sizes = {2, -2};
     },
     Error::InvalidProgram,
     {"value 0", "negative size -2"}},
    {"DimOrderNotPermutation",
     [](ProgramSpec& p) {
       tensor0(p).dim_order = {1, 1};
     },
     Error::InvalidProgram,
     {"value 0", "dim_order"}},
    {"StrideOverflowsInt32",
     // Found by fuzz_program (UBSan: 3 * 1610612739 in int32 strides): the
     // byte count fits a size_t, the outer stride does not fit an int32.
     [](ProgramSpec& p) {
       tensor0(p).sizes = {2, 3, 1610612739};
       tensor0(p).dim_order = {0, 1, 2};
     },
     Error::InvalidProgram,
     {"strides overflow", "dim 1 of size 3"}},
    {"DimOrderLengthMismatch",
     [](ProgramSpec& p) {
       tensor0(p).dim_order = {0, 1, 2};
     },
     Error::InvalidProgram,
     {"value 0", "2 sizes but 3 dim_order"}},
    {"ConstantIndexOutOfRange",
     [](ProgramSpec& p) {
       tensor0(p).planned = false;
       tensor0(p).data_buffer_idx = 3;
     },
     Error::InvalidProgram,
     {"value 0", "data_buffer_idx 3"}},
    {"ConstantTooSmall",
     [](ProgramSpec& p) {
       p.constants = {float_bytes({1})};
       tensor0(p).planned = false;
       tensor0(p).data_buffer_idx = 1;
       p.segments = {};
     },
     Error::InvalidProgram,
     {"Constant buffer 1", "16 bytes"}},
    {"JumpDestinationOutOfRange",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::Bool(true));
       forward(p).chains[0].push_back(InstructionSpec::JumpFalse(2, 5));
     },
     Error::InvalidProgram,
     {"instruction 1", "jump destination 5"}},
    {"JumpConditionOutOfRange",
     [](ProgramSpec& p) {
       forward(p).chains[0].push_back(InstructionSpec::JumpFalse(9, 0));
     },
     Error::InvalidProgram,
     {"instruction 1", "cond_value_index refers to value 9"}},
    {"MoveOutOfRange",
     [](ProgramSpec& p) {
       forward(p).chains[0].push_back(InstructionSpec::Move(0, 12));
     },
     Error::InvalidProgram,
     {"instruction 1", "move_to refers to value 12"}},
    {"FreeOutOfRange",
     [](ProgramSpec& p) {
       forward(p).chains[0].push_back(InstructionSpec::Free(-3));
     },
     Error::InvalidProgram,
     {"instruction 1", "value_index refers to value -3"}},
    {"DelegateIndexOutOfRange",
     [](ProgramSpec& p) {
       forward(p).chains[0].push_back(InstructionSpec::Delegate(0, {0}));
     },
     Error::InvalidProgram,
     {"instruction 1", "delegate_index 0", "0 delegates"}},
    {"UnregisteredBackend",
     [](ProgramSpec& p) {
       p.inline_delegate_data = {{1}};
       forward(p).delegates = {{"NoSuchBackend", true, 0, {}}};
     },
     Error::NotFound,
     {"NoSuchBackend", "not registered"}},
    {"SegmentOffsetPlusSizeOverflows",
     [](ProgramSpec& p) {
       with_constant_segment(p);
       p.segment_overrides[0] = {UINT64_MAX - 8, 16};
     },
     Error::InvalidProgram,
     {"Segment 0", "offset 18446744073709551607, size 16", "past the end"}},
    {"SegmentOffsetMinusOne",
     [](ProgramSpec& p) {
       with_constant_segment(p);
       p.segment_overrides[0] = {UINT64_MAX, 1};
     },
     Error::InvalidProgram,
     {"Segment 0", "offset 18446744073709551615"}},
    {"SegmentSizeNear2To64",
     [](ProgramSpec& p) {
       with_constant_segment(p);
       p.segment_overrides[0] = {0, UINT64_MAX - 1};
     },
     Error::InvalidProgram,
     {"Segment 0", "size 18446744073709551614"}},
    {"NbytesOverflows",
     [](ProgramSpec& p) {
       tensor0(p).sizes = {INT32_MAX, INT32_MAX, INT32_MAX};
     },
     Error::InvalidProgram,
     {"value 0", "byte size overflows"}},
    {"DimOfInt32Max",
     [](ProgramSpec& p) { tensor0(p).sizes = {INT32_MAX}; },
     Error::InvalidProgram,
     {"value 0", "8589934588 bytes", "does not fit"}},
    {"TenThousandDims",
     [](ProgramSpec& p) { tensor0(p).sizes = std::vector<int32_t>(10000, 1); },
     Error::InvalidProgram,
     {"value 0", "rank 10000 exceeds"}},
    {"InlineConstantIndexOutOfRange",
     [](ProgramSpec& p) {
       p.inline_constants = true;
       p.constants = {float_bytes({1, 2, 3, 4})};
       tensor0(p).planned = false;
       tensor0(p).data_buffer_idx = 2;
     },
     Error::InvalidProgram,
     {"value 0", "data_buffer_idx 2"}},
    {"BoolConstantByteNotZeroOrOne",
     [](ProgramSpec& p) {
       TensorSpec flags;
       flags.dtype = etensor::ScalarType::Bool;
       flags.sizes = {4};
       flags.data_buffer_idx = 1;
       p.constants = {{1, 0, 64, 1}};
       forward(p).values.push_back(ValueSpec::Tensor(flags));
     },
     Error::InvalidProgram,
     {"value 2", "bool element 2 is the byte 64, not 0 or 1"}},
    {"TensorWithoutStorage",
     [](ProgramSpec& p) {
       TensorSpec intermediate;
       intermediate.sizes = {2, 2};
       forward(p).values.push_back(ValueSpec::Tensor(intermediate));
     },
     Error::InvalidProgram,
     {"value 2", "16 bytes has no storage", "not an input or output"}},
    {"JumpBackWithoutProgress",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::Bool(false));
       forward(p).chains[0].push_back(InstructionSpec::Free(0));
       forward(p).chains[0].push_back(InstructionSpec::JumpFalse(2, 1));
     },
     Error::InvalidProgram,
     {"instruction 2", "jumps back to instruction 1", "cannot make progress"}},
    {"JumpToItself",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::Bool(false));
       forward(p).chains[0].push_back(InstructionSpec::JumpFalse(2, 1));
     },
     Error::InvalidProgram,
     {"instruction 1", "jumps back to instruction 1"}},
    {"KernelArgumentOfWrongType",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::Int(3));
       forward(p).chains[0][0].args[0] = 2;
     },
     Error::InvalidProgram,
     {"instruction 0", "'test::add_one.out' argument 0 must be Tensor",
      "passes Int"}},
    {"KernelCallWithTooFewArguments",
     [](ProgramSpec& p) { forward(p).chains[0][0].args = {0}; },
     Error::InvalidProgram,
     {"instruction 0", "'test::add_one.out' takes 2 arguments", "passes 1"}},
    {"KernelCallWithTooManyArguments",
     [](ProgramSpec& p) { forward(p).chains[0][0].args = {0, 1, 1, 1}; },
     Error::InvalidProgram,
     {"instruction 0", "takes 2 arguments", "passes 4"}},
    {"MoveChangesAValuesType",
     [](ProgramSpec& p) {
       forward(p).values.push_back(ValueSpec::Int(3));
       forward(p).chains[0].push_back(InstructionSpec::Move(2, 1));
     },
     Error::InvalidProgram,
     {"instruction 1", "moves a Int (value 2) into a Tensor (value 1)"}},
    {"NegativePlannedBufferSize",
     [](ProgramSpec& p) {
       forward(p).non_const_buffer_sizes = {0, -1};
     },
     Error::InvalidProgram,
     {"planned buffer 0", "negative size"}},
};

INSTANTIATE_TEST_SUITE_P(
    Cases,
    MethodMalformedTest,
    ::testing::ValuesIn(kCases),
    [](const ::testing::TestParamInfo<MalformedCase>& info) {
      return std::string(info.param.name);
    });

class PlannedMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }
};

TEST_F(PlannedMemoryTest, WrongNumberOfBuffersIsRejected) {
  for (const std::vector<size_t>& sizes :
       {std::vector<size_t>{}, std::vector<size_t>{32, 32}}) {
    MethodHarness harness;
    LogCapture logs;
    EXPECT_EQ(harness.load(add_one_program(), "forward", sizes),
              Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"forward",
                               "needs 1 planned memory buffers",
                               std::to_string(sizes.size())}));
  }
}

TEST_F(PlannedMemoryTest, SmallBufferIsRejected) {
  MethodHarness harness;
  LogCapture logs;
  EXPECT_EQ(harness.load(add_one_program(), "forward", std::vector<size_t>{16}),
            Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"planned buffer 0", "32 bytes"}));
}

TEST_F(PlannedMemoryTest, ExhaustedMethodAllocatorFailsCleanly) {
  ProgramSpec spec = add_one_program();
  // Far more values than the test pool of 64 KiB can hold.
  for (int i = 0; i < 4000; ++i) {
    spec.methods[0].values.push_back(ValueSpec::Int(i));
  }
  MethodHarness harness;
  EXPECT_EQ(harness.load(spec), Error::MemoryAllocationFailed);
}

class HostileCountsTest : public PlannedMemoryTest {};

ProgramSpec program_with_methods(int extra_methods) {
  ProgramSpec spec;
  for (int i = 0; i < extra_methods; ++i) {
    spec.methods.push_back(add_one_method("m" + std::to_string(i)));
  }
  spec.methods.push_back(add_one_method("forward"));
  return spec;
}

TEST_F(HostileCountsTest, HundredThousandExecutionPlans) {
  // More tables than the flatbuffer verifier accepts (a million): the load
  // is refused before anything walks the plans.
  MethodHarness harness;
  LogCapture logs;
  EXPECT_EQ(harness.load(program_with_methods(100000)), Error::InvalidProgram);
  EXPECT_TRUE(logs.contains({"failed verification"}));
}

TEST_F(HostileCountsTest, TenThousandExecutionPlans) {
  MethodHarness harness;
  ASSERT_EQ(harness.load(program_with_methods(10000)), Error::Ok);
  EXPECT_EQ(harness.program().num_methods(), 10001u);
  EXPECT_EQ(harness.method().execute(), Error::Ok);
}

TEST_F(HostileCountsTest, HundredThousandMemoryPlans) {
  ProgramSpec spec = add_one_program();
  spec.methods[0].non_const_buffer_sizes.resize(100001, 0);
  {
    MethodHarness harness;
    LogCapture logs;
    EXPECT_EQ(harness.load(spec, "forward", std::vector<size_t>{32}),
              Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"needs 100000 planned memory buffers"}));
  }
  // Given every buffer it asks for, the method loads and runs.
  MethodHarness harness;
  ASSERT_EQ(harness.load(spec), Error::Ok);
  EXPECT_EQ(harness.method().execute(), Error::Ok);
}

class BudgetTest : public PlannedMemoryTest {};

TEST_F(BudgetTest, EndlessLoopStopsAtTheBudgetNamingTheLoop) {
  MethodHarness harness;
  ASSERT_EQ(harness.load(endless_loop_program()), Error::Ok);
  EXPECT_EQ(harness.method().max_instructions(), 0u);
  harness.method().set_max_instructions(1000);
  for (int run = 0; run < 2; ++run) {
    LogCapture logs;
    EXPECT_EQ(harness.method().execute(), Error::InvalidState);
    EXPECT_TRUE(logs.contains({"forward",
                               "instruction budget of 1000 exhausted",
                               "chain 0 instruction 0 (KernelCall)"}));
    EXPECT_TRUE(logs.contains(
        {"jumps back from chain 0 instruction 1 (JumpFalseCall) to "
         "instruction 0"}));
  }
}

TEST_F(BudgetTest, LoopThroughMovesLoadsAndEnds) {
  // Moves may change a loop's condition: this loop exits on its second pass.
  ProgramSpec spec = add_one_program();
  auto& values = spec.methods[0].values;
  values.push_back(ValueSpec::Bool(false)); // 2: c
  values.push_back(ValueSpec::Bool(true));  // 3: a
  values.push_back(ValueSpec::Bool(false)); // 4: previous c
  auto& chain = spec.methods[0].chains[0];
  chain.push_back(InstructionSpec::Move(2, 4));
  chain.push_back(InstructionSpec::Move(3, 2));
  chain.push_back(InstructionSpec::JumpFalse(4, 1));
  MethodHarness harness;
  ASSERT_EQ(harness.load(spec), Error::Ok);
  harness.method().set_max_instructions(7);
  EXPECT_EQ(harness.method().execute(), Error::Ok);
}

TEST_F(BudgetTest, ProgramWithinTheBudgetRuns) {
  MethodHarness harness;
  ASSERT_EQ(harness.load(add_one_program()), Error::Ok);
  harness.method().set_max_instructions(1);
  EXPECT_EQ(harness.method().execute(), Error::Ok);
  harness.method().set_max_instructions(
      Method::kMaxInstructionsForUntrustedPrograms);
  EXPECT_EQ(harness.method().execute(), Error::Ok);
}

} // namespace
