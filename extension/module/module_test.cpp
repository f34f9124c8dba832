#include <executorch/extension/module/module.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/devtools/etdump/etdump_gen.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/temp_file.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using executorch::aten::ScalarType;
using executorch::etdump::ETDumpGen;
using executorch::extension::BufferDataLoader;
using executorch::extension::empty;
using executorch::extension::FileDataLoader;
using executorch::extension::make_tensor_ptr;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::MethodMeta;
using executorch::runtime::Program;
using executorch::runtime::Result;
using namespace executorch::runtime::testing;

namespace {

// "forward": x + 1 and "add_constant": x + 2 * {1, 2, 3, 4}, on float
// [2, 2] tensors. With `unplanned_output`, forward's output has no planned
// memory and needs a buffer from the caller.
std::vector<uint8_t> two_method_program(bool unplanned_output = false) {
  ProgramSpec spec;
  spec.methods = {add_one_method("forward"),
                  add_constant_method("add_constant")};
  if (unplanned_output) {
    spec.methods[0].values[1].tensor.planned = false;
    spec.methods[0].non_const_buffer_sizes = {0, 16};
  }
  spec.constants = {float_bytes({1, 2, 3, 4})};
  return build_program(spec);
}

std::vector<float> floats(const EValue& value) {
  const auto& t = value.toTensor();
  return std::vector<float>(t.const_data_ptr<float>(),
                            t.const_data_ptr<float>() + t.numel());
}

class ModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }
  TempFile file_{two_method_program()};
  TensorPtr x_ = make_tensor_ptr({2, 2}, std::vector<float>{1, 2, 3, 4});
};

TEST_F(ModuleTest, LoadsLazilyAndListsMethods) {
  Module module(file_.path());
  EXPECT_FALSE(module.is_loaded());
  EXPECT_EQ(module.program(), nullptr);
  Result<std::unordered_set<std::string>> names = module.method_names();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names,
            (std::unordered_set<std::string>{"forward", "add_constant"}));
  EXPECT_TRUE(module.is_loaded());
  EXPECT_FALSE(module.is_method_loaded("forward"));
  ASSERT_EQ(module.load_forward(), Error::Ok);
  EXPECT_TRUE(module.is_method_loaded("forward"));
  EXPECT_FALSE(module.is_method_loaded("add_constant"));
  EXPECT_EQ(*module.num_methods(), 2u);
  EXPECT_TRUE(module.unload_forward());
  EXPECT_FALSE(module.is_method_loaded("forward"));
  EXPECT_FALSE(module.unload_method("forward"));
}

TEST_F(ModuleTest, RunsMethodsInEveryLoadMode) {
  for (Module::LoadMode mode : {Module::LoadMode::File,
                                Module::LoadMode::Mmap,
                                Module::LoadMode::MmapUseMlockIgnoreErrors}) {
    Module module(file_.path(), mode);
    Result<std::vector<EValue>> out = module.forward(*x_);
    ASSERT_TRUE(out.ok()) << static_cast<int>(mode);
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ(floats(out->at(0)), (std::vector<float>{2, 3, 4, 5}));
    Result<EValue> sum = module.get("add_constant", *x_);
    ASSERT_TRUE(sum.ok());
    EXPECT_EQ(floats(*sum), (std::vector<float>{3, 6, 9, 12}));
  }
  // Locking may be refused (RLIMIT_MEMLOCK); then the error says so.
  LogCapture logs;
  Module locked(file_.path(), Module::LoadMode::MmapUseMlock);
  Result<std::vector<EValue>> out = locked.forward(*x_);
  if (out.ok()) {
    EXPECT_EQ(floats(out->at(0)), (std::vector<float>{2, 3, 4, 5}));
  } else {
    EXPECT_EQ(out.error(), Error::AccessFailed);
    EXPECT_TRUE(logs.contains({"locking", file_.path()}));
  }
}

TEST_F(ModuleTest, ReportsToItsEventTracer) {
  auto etdump = std::make_unique<ETDumpGen>();
  ETDumpGen* tracer = etdump.get();
  Module module(file_.path(), Module::LoadMode::File, std::move(etdump));
  EXPECT_EQ(module.event_tracer(), tracer);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(module.forward(*x_).ok());
  }
  // The method's load ("Default") and each execution.
  EXPECT_EQ(tracer->get_num_blocks(), 3u);

  // A tracer given to load_method is used instead, for that method.
  ETDumpGen other;
  ASSERT_EQ(module.load_method("add_constant", nullptr, &other), Error::Ok);
  ASSERT_TRUE(module.get("add_constant", *x_).ok());
  EXPECT_EQ(other.get_num_blocks(), 2u);
  EXPECT_EQ(tracer->get_num_blocks(), 3u);
}

TEST_F(ModuleTest, MissingFileIsNotFound) {
  LogCapture logs;
  Module module("/nonexistent/model.pte");
  EXPECT_EQ(module.load(), Error::NotFound);
  EXPECT_EQ(module.forward(*x_).error(), Error::NotFound);
  EXPECT_EQ(module.method_names().error(), Error::NotFound);
  EXPECT_FALSE(module.is_loaded());
  EXPECT_TRUE(
      logs.contains({"cannot open the program", "/nonexistent/model.pte"}));
}

TEST_F(ModuleTest, FileThatIsNotAProgramFailsToLoad) {
  TempFile garbage(std::vector<uint8_t>(256, 0x5a));
  LogCapture logs;
  Module module(garbage.path());
  const Error error = module.load();
  EXPECT_NE(error, Error::Ok);
  EXPECT_TRUE(logs.contains({"not a loadable program", garbage.path()}));
}

TEST_F(ModuleTest, WrongMethodNameListsTheMethods) {
  Module module(file_.path());
  LogCapture logs;
  EXPECT_EQ(module.execute("backward", *x_).error(), Error::InvalidArgument);
  EXPECT_TRUE(
      logs.contains({"no method 'backward'", "'forward'", "'add_constant'"}));
  EXPECT_EQ(module.method_meta("backward").error(), Error::InvalidArgument);
  EXPECT_EQ(module.load_method("backward"), Error::InvalidArgument);
  EXPECT_FALSE(module.is_method_loaded("backward"));
}

TEST_F(ModuleTest, WrongInputCountStatesExpectedAndActual) {
  Module module(file_.path());
  {
    LogCapture logs;
    EXPECT_EQ(module.forward({*x_, *x_}).error(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"'forward' takes 1 inputs, got 2"}));
  }
  {
    LogCapture logs;
    EXPECT_EQ(module.forward().error(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"'forward' takes 1 inputs, got 0", "input 0"}));
  }
  LogCapture logs;
  EXPECT_EQ(module.set_inputs({}), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"'forward' takes 1 inputs, got 0"}));
}

TEST_F(ModuleTest, WrongInputDtypeOrShapeStatesExpectedAndActual) {
  Module module(file_.path());
  {
    TensorPtr ints = make_tensor_ptr({2, 2}, std::vector<int32_t>{1, 2, 3, 4});
    LogCapture logs;
    EXPECT_EQ(module.forward(*ints).error(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"input 0", "expected dtype Float", "got Int"}));
  }
  {
    TensorPtr wide = make_tensor_ptr({2, 3}, std::vector<float>(6));
    LogCapture logs;
    EXPECT_EQ(module.forward(*wide).error(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"input 0", "dim 1", "expected size 2, got 3"}));
  }
  {
    TensorPtr flat = make_tensor_ptr({4}, std::vector<float>(4));
    LogCapture logs;
    EXPECT_EQ(module.forward(*flat).error(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"input 0", "expected rank 2, got rank 1"}));
  }
  LogCapture logs;
  EXPECT_EQ(module.forward(EValue(int64_t(3))).error(), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"input 0", "expected Tensor"}));
}

TEST_F(ModuleTest, SetInputKeepsValuesForLaterRuns) {
  Module module(file_.path());
  ASSERT_EQ(module.set_input(*x_, 0), Error::Ok);
  Result<std::vector<EValue>> out = module.forward();
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{2, 3, 4, 5}));
  // None keeps the input set before.
  Result<std::vector<EValue>> again = module.forward(EValue());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(floats(again->at(0)), (std::vector<float>{2, 3, 4, 5}));
  TensorPtr y = make_tensor_ptr({2, 2}, std::vector<float>{0, 0, 0, 1});
  ASSERT_EQ(module.set_inputs("add_constant", {*y}), Error::Ok);
  Result<EValue> sum = module.get("add_constant");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(floats(*sum), (std::vector<float>{2, 4, 6, 9}));
  EXPECT_EQ(module.set_input(*x_, 1), Error::InvalidArgument);
}

TEST_F(ModuleTest, MethodMetaDescribesInputsWithoutLoadingTheMethod) {
  Module module(file_.path());
  Result<MethodMeta> meta = module.method_meta("forward");
  ASSERT_TRUE(meta.ok());
  EXPECT_FALSE(module.is_method_loaded("forward"));
  EXPECT_EQ(meta->num_inputs(), 1u);
  EXPECT_EQ(meta->num_outputs(), 1u);
  auto info = meta->input_tensor_meta(0);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->scalar_type(), ScalarType::Float);
  EXPECT_EQ(std::vector<int32_t>(info->sizes().begin(), info->sizes().end()),
            (std::vector<int32_t>{2, 2}));
}

TEST_F(ModuleTest, SetOutputWritesIntoCallerMemory) {
  TempFile file(two_method_program(/*unplanned_output=*/true));
  Module module(file.path());
  // Without set_output the Module provides the buffer.
  Result<std::vector<EValue>> out = module.forward(*x_);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{2, 3, 4, 5}));

  TensorPtr result = empty({2, 2});
  ASSERT_EQ(module.set_outputs({result}), Error::Ok);
  Result<std::vector<EValue>> into = module.forward(x_);
  ASSERT_TRUE(into.ok());
  EXPECT_EQ(into->at(0).toTensor().const_data_ptr(), result->const_data_ptr());
  EXPECT_EQ(result->const_data_ptr<float>()[3], 5.f);
  // The last outputs, without running again.
  Result<EValue> last = module.get_output();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->toTensor().const_data_ptr(), result->const_data_ptr());
  EXPECT_EQ(module.get_outputs()->size(), 1u);
  {
    LogCapture logs;
    EXPECT_EQ(module.get_output(1).error(), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"has 1 outputs; there is no output 1"}));
    EXPECT_EQ(module.set_outputs({result, result}), Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"'forward' has 1 outputs, got 2"}));
  }

  TensorPtr small = empty({2});
  LogCapture logs;
  EXPECT_EQ(module.set_output(*small), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"output 0 needs 16 bytes, got a buffer of 8"}));
  EXPECT_EQ(module.set_output(EValue(1.0)), Error::InvalidArgument);
  EXPECT_EQ(module.set_output(*result, 1), Error::InvalidArgument);
  // A planned output keeps its planned memory.
  LogCapture planned_logs;
  EXPECT_EQ(module.set_output("add_constant", *result), Error::InvalidState);
  EXPECT_TRUE(planned_logs.contains({"memory planned"}));
}

TEST_F(ModuleTest, RunsFromADataLoaderWithCallerAllocators) {
  const std::vector<uint8_t> bytes = two_method_program();
  std::vector<uint8_t> pool(64 * 1024);
  Module module(std::make_unique<BufferDataLoader>(bytes.data(), bytes.size()),
                std::make_unique<executorch::runtime::MemoryAllocator>(
                    pool.size(), pool.data()));
  Result<std::vector<EValue>> out = module.forward(*x_);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(floats(out->at(0)), (std::vector<float>{2, 3, 4, 5}));
}

TEST_F(ModuleTest, ModulesShareOneProgram) {
  auto first = std::make_unique<Module>(file_.path(), Module::LoadMode::Mmap);
  ASSERT_EQ(first->load(), Error::Ok);
  std::shared_ptr<Program> program = first->program();
  Module second(program);
  EXPECT_TRUE(second.is_loaded());
  EXPECT_EQ(second.program().get(), program.get());
  // The program (and the loader it reads through) outlives its first owner.
  first.reset();
  program.reset();
  Result<EValue> sum = second.get("add_constant", *x_);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(floats(*sum), (std::vector<float>{3, 6, 9, 12}));
  // Each Module has its own methods and memory.
  Module third(second.program());
  TensorPtr zeros = make_tensor_ptr({2, 2}, std::vector<float>(4));
  Result<EValue> other = third.get("add_constant", *zeros);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(floats(*other), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(floats(*sum), (std::vector<float>{3, 6, 9, 12}));
}

TEST_F(ModuleTest, InstructionBudgetStopsALoopThatNeverEnds) {
  const std::vector<uint8_t> bytes = build_program(endless_loop_program());
  Module module(std::make_unique<BufferDataLoader>(bytes.data(), bytes.size()));
  EXPECT_EQ(module.max_instructions(), 0u);
  // Set before the method loads: it applies to methods loaded later.
  module.set_max_instructions(
      executorch::runtime::Method::kMaxInstructionsForUntrustedPrograms);
  {
    LogCapture logs;
    Result<std::vector<EValue>> out = module.forward(*x_);
    EXPECT_EQ(out.error(), Error::InvalidState);
    EXPECT_TRUE(logs.contains({"'forward'",
                               "instruction budget of 1000000 exhausted",
                               "chain 0 instruction 0 (KernelCall)"}));
  }
  // Changed after the load: the loaded method takes the new budget.
  module.set_max_instructions(10);
  LogCapture logs;
  EXPECT_EQ(module.forward(*x_).error(), Error::InvalidState);
  EXPECT_TRUE(logs.contains({"instruction budget of 10 exhausted"}));
  EXPECT_EQ((*module.method("forward"))->max_instructions(), 10u);
}

} // namespace
