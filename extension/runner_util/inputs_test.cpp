#include <executorch/extension/runner_util/inputs.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using executorch::extension::BufferCleanup;
using executorch::extension::describe_tensor;
using executorch::extension::InputTensorSource;
using executorch::extension::make_input_tensor;
using executorch::extension::TensorPtr;
using executorch::extension::prepare_input_tensors;
using executorch::extension::PrepareInputTensorsOptions;
using executorch::runtime::Error;
using executorch::runtime::Method;
using executorch::runtime::MethodMeta;
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

std::vector<float> floats(const TensorPtr& tensor) {
  return std::vector<float>(tensor->const_data_ptr<float>(),
                            tensor->const_data_ptr<float>() + tensor->numel());
}

// A file in the test's temporary directory holding `values`.
std::string write_floats(const char* name, const std::vector<float>& values) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(values.data()),
             static_cast<std::streamsize>(values.size() * sizeof(float)));
  return path;
}

TEST_F(PrepareInputsTest, MakesInputsAtGivenSizesFromFiles) {
  const MethodMeta meta = method_->method_meta();
  Result<TensorPtr> ones = make_input_tensor(meta, 0);
  ASSERT_TRUE(ones.ok());
  EXPECT_EQ(describe_tensor(**ones), "Float[2, 2]");
  EXPECT_EQ(floats(*ones), (std::vector<float>{1, 1, 1, 1}));

  InputTensorSource smaller;
  smaller.sizes = std::vector<int32_t>{1, 2};
  Result<TensorPtr> two = make_input_tensor(meta, 0, smaller);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(describe_tensor(**two), "Float[1, 2]");

  InputTensorSource from_file;
  from_file.file = write_floats("inputs_test_four.bin", {1, 2, 3, 4});
  Result<TensorPtr> read = make_input_tensor(meta, 0, from_file);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(floats(*read), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_EQ(method_->set_input(executorch::runtime::EValue(**read), 0),
            Error::Ok);
  EXPECT_EQ(run(), (std::vector<float>{2, 3, 4, 5}));
  std::remove(from_file.file->c_str());
}

TEST_F(PrepareInputsTest, ReportsWrongRanksFilesAndNonTensorInputs) {
  const MethodMeta meta = method_->method_meta();
  {
    InputTensorSource rank_one;
    rank_one.sizes = std::vector<int32_t>{4};
    LogCapture logs;
    EXPECT_EQ(make_input_tensor(meta, 0, rank_one).error(),
              Error::InvalidArgument);
    EXPECT_TRUE(logs.contains(
        {"'forward' input 0", "1 sizes given, the input has rank 2"}));
  }
  {
    InputTensorSource short_file;
    short_file.file = write_floats("inputs_test_three.bin", {1, 2, 3});
    LogCapture logs;
    EXPECT_EQ(make_input_tensor(meta, 0, short_file).error(),
              Error::InvalidArgument);
    EXPECT_TRUE(logs.contains({"input 0 (Float[2, 2]) from '" + *short_file.file +
                                   "': expected 16 bytes, the file has 12"}));
    std::remove(short_file.file->c_str());
  }
  {
    InputTensorSource missing;
    missing.file = ::testing::TempDir() + "inputs_test_missing.bin";
    LogCapture logs;
    EXPECT_EQ(make_input_tensor(meta, 0, missing).error(), Error::AccessFailed);
    EXPECT_TRUE(logs.contains({"cannot open input file", *missing.file}));
  }
  EXPECT_NE(make_input_tensor(meta, 1).error(), Error::Ok);
}

} // namespace
