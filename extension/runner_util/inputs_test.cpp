#include <executorch/extension/runner_util/inputs.h>

#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using executorch::extension::BufferCleanup;
using executorch::extension::prepare_input_tensors;
using executorch::extension::PrepareInputTensorsOptions;
using executorch::runtime::Error;
using executorch::runtime::Method;
using executorch::runtime::Program;
using executorch::runtime::Result;
using namespace executorch::runtime::testing;

namespace {

class PrepareInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
    program_.emplace(std::move(*Program::load(&loader_)));
    memory_ =
        std::make_unique<ManagedMemory>(*program_->method_meta("forward"));
    Result<Method> method =
        program_->load_method("forward", memory_->manager());
    ASSERT_TRUE(method.ok());
    method_.emplace(std::move(*method));
  }

  std::vector<float> run() {
    EXPECT_EQ(method_->execute(), Error::Ok);
    const auto& out = method_->get_output(0).toTensor();
    return std::vector<float>(out.const_data_ptr<float>(),
                              out.const_data_ptr<float>() + out.numel());
  }

  std::vector<uint8_t> bytes_ = build_program(add_one_program());
  BufferDataLoader loader_{bytes_.data(), bytes_.size()};
  std::optional<Program> program_;
  std::unique_ptr<ManagedMemory> memory_;
  std::optional<Method> method_;
};

TEST_F(PrepareInputsTest, FillsInputsWithOnes) {
  Result<BufferCleanup> inputs = prepare_input_tensors(*method_);
  ASSERT_TRUE(inputs.ok());
  EXPECT_EQ(run(), (std::vector<float>{2, 2, 2, 2}));
}

TEST_F(PrepareInputsTest, CopiesGivenBuffers) {
  std::vector<float> values{1, 2, 3, 4};
  std::vector<std::pair<char*, size_t>> buffers{
      {reinterpret_cast<char*>(values.data()), 16}};
  Result<BufferCleanup> inputs = prepare_input_tensors(*method_, {}, buffers);
  ASSERT_TRUE(inputs.ok());
  EXPECT_EQ(run(), (std::vector<float>{2, 3, 4, 5}));
}

TEST_F(PrepareInputsTest, ReportsWrongBufferSizesAndLimits) {
  std::vector<float> values{1, 2, 3};
  std::vector<std::pair<char*, size_t>> buffers{
      {reinterpret_cast<char*>(values.data()), 12}};
  {
    LogCapture logs;
    EXPECT_EQ(prepare_input_tensors(*method_, {}, buffers).error(),
              Error::InvalidArgument);
    EXPECT_TRUE(logs.contains(
        {"'forward' input 0", "expected 16 bytes", "buffer has 12"}));
  }
  PrepareInputTensorsOptions few_bytes;
  few_bytes.max_total_allocation_size = 8;
  EXPECT_EQ(prepare_input_tensors(*method_, few_bytes).error(),
            Error::NotSupported);
  PrepareInputTensorsOptions no_inputs;
  no_inputs.max_inputs = 0;
  LogCapture logs;
  EXPECT_EQ(prepare_input_tensors(*method_, no_inputs).error(),
            Error::NotSupported);
  EXPECT_TRUE(logs.contains({"has 1 inputs, more than the 0 allowed"}));
}

} // namespace
