// Loading a bundled program's inputs into a method and checking its outputs,
// on .bpte files built here with the schema's generated builders (the
// Python side and upstream's files are tested in
// test/devtools/test_bundled_program.py).

#include <executorch/devtools/bundled_program/bundled_program.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <executorch/devtools/bundled_program/bundled_program_schema_generated.h>
#include <optional>

#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;
using executorch::bundled_program::get_program_data;
using executorch::bundled_program::is_bundled_program;
using executorch::bundled_program::load_bundled_input;
using executorch::bundled_program::num_test_cases;
using executorch::bundled_program::OutputMismatch;
using executorch::bundled_program::verify_method_outputs;

namespace fb = bundled_program_flatbuffer;

namespace {

struct TestCase {
  std::vector<float> input;
  std::vector<float> expected;
  // Sizes of the input tensor; the method takes a [2, 2] float.
  std::vector<int32_t> input_sizes = {2, 2};
};

flatbuffers::Offset<fb::Value> float_value(flatbuffers::FlatBufferBuilder& b,
                                           const std::vector<float>& values,
                                           const std::vector<int32_t>& sizes) {
  b.ForceVectorAlignment(values.size() * sizeof(float), 1, 16);
  auto data = b.CreateVector(reinterpret_cast<const uint8_t*>(values.data()),
                             values.size() * sizeof(float));
  std::vector<uint8_t> dim_order(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    dim_order[d] = static_cast<uint8_t>(d);
  }
  auto tensor = fb::CreateTensor(b,
                                 executorch_flatbuffer::ScalarType::FLOAT,
                                 b.CreateVector(sizes),
                                 data,
                                 b.CreateVector(dim_order));
  return fb::CreateValue(b, fb::ValueUnion::Tensor, tensor.Union());
}

// A .bpte of add_one_program() (out = x + 1) with `cases` for "forward".
std::vector<uint8_t> bundle(const std::vector<TestCase>& cases) {
  const std::vector<uint8_t> program = build_program(add_one_program());
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::BundledMethodTestCase>> built;
  for (const TestCase& c : cases) {
    std::vector<flatbuffers::Offset<fb::Value>> inputs = {
        float_value(b, c.input, c.input_sizes)};
    std::vector<flatbuffers::Offset<fb::Value>> outputs = {
        float_value(b, c.expected, {2, 2})};
    built.push_back(fb::CreateBundledMethodTestCase(
        b, b.CreateVector(inputs), b.CreateVector(outputs)));
  }
  auto suite = fb::CreateBundledMethodTestSuite(
      b, b.CreateString("forward"), b.CreateVector(built));
  b.ForceVectorAlignment(program.size(), 1, 32);
  auto program_data = b.CreateVector(program);
  auto root = fb::CreateBundledProgram(
      b, 0, b.CreateVector(std::vector<decltype(suite)>{suite}), program_data);
  fb::FinishBundledProgramBuffer(b, root);
  return std::vector<uint8_t>(b.GetBufferPointer(),
                              b.GetBufferPointer() + b.GetSize());
}

class BundledProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_kernels();
  }

  // Loads "forward" from the program inside `file`.
  Method& load(std::vector<uint8_t>& file) {
    const void* program_data = nullptr;
    size_t program_size = 0;
    EXPECT_EQ(get_program_data(
                  file.data(), file.size(), &program_data, &program_size),
              Error::Ok);
    program_bytes_.assign(
        static_cast<const uint8_t*>(program_data),
        static_cast<const uint8_t*>(program_data) + program_size);
    loader_ = std::make_unique<BufferDataLoader>(program_bytes_);
    program_.emplace(std::move(*Program::load(loader_.get())));
    memory_ =
        std::make_unique<ManagedMemory>(*program_->method_meta("forward"));
    method_.emplace(
        std::move(*program_->load_method("forward", memory_->manager())));
    return *method_;
  }

  std::vector<uint8_t> program_bytes_;
  std::unique_ptr<BufferDataLoader> loader_;
  std::optional<Program> program_;
  std::unique_ptr<ManagedMemory> memory_;
  std::optional<Method> method_;
};

TEST_F(BundledProgramTest, RunsAndChecksEachTestCase) {
  std::vector<uint8_t> file =
      bundle({{{1, 2, 3, 4}, {2, 3, 4, 5}}, {{0, 0, -1, 7}, {1, 1, 0, 8}}});
  ASSERT_TRUE(is_bundled_program(file.data(), file.size()));
  Method& method = load(file);
  EXPECT_EQ(*num_test_cases(file.data(), "forward"), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(load_bundled_input(method, file.data(), i), Error::Ok);
    ASSERT_EQ(method.execute(), Error::Ok);
    OutputMismatch worst;
    EXPECT_EQ(verify_method_outputs(method, file.data(), i, 1e-5, 1e-8, &worst),
              Error::Ok);
    EXPECT_EQ(worst.num_mismatched, 0u);
    EXPECT_EQ(worst.num_elements, 4u);
  }
}

TEST_F(BundledProgramTest, AMismatchNamesTheWorstElement) {
  // Element 2 is off by 0.5, element 3 by 3.
  std::vector<uint8_t> file = bundle({{{1, 2, 3, 4}, {2, 3, 4.5f, 8}}});
  Method& method = load(file);
  ASSERT_EQ(load_bundled_input(method, file.data(), 0), Error::Ok);
  ASSERT_EQ(method.execute(), Error::Ok);
  LogCapture logs;
  OutputMismatch worst;
  EXPECT_EQ(verify_method_outputs(method, file.data(), 0, 1e-5, 1e-8, &worst),
            Error::NotFound);
  EXPECT_EQ(worst.num_mismatched, 2u);
  EXPECT_EQ(worst.output_index, 0u);
  EXPECT_EQ(worst.element_index, 3u);
  EXPECT_EQ(worst.expected, 8.0);
  EXPECT_EQ(worst.actual, 5.0);
  EXPECT_TRUE(logs.contains({"2 of 4 elements differ", "element 3"}));
  // A looser tolerance accepts it.
  EXPECT_EQ(verify_method_outputs(method, file.data(), 0, 0.0, 3.0), Error::Ok);
}

TEST_F(BundledProgramTest, TestCasesThatDoNotFitAreRejected) {
  std::vector<uint8_t> file = bundle({{{1, 2, 3, 4}, {2, 3, 4, 5}}});
  Method& method = load(file);
  LogCapture logs;
  EXPECT_EQ(load_bundled_input(method, file.data(), 1), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"1 test cases", "test case 1"}));

  // Three floats of data for a [2, 2] tensor.
  std::vector<uint8_t> short_data = bundle({{{1, 2, 3}, {2, 3, 4, 5}}});
  Method& other = load(short_data);
  EXPECT_EQ(load_bundled_input(other, short_data.data(), 0),
            Error::InvalidProgram);
  EXPECT_TRUE(logs.contains({"input 0", "12 bytes of data", "16 bytes"}));

  // A [4] input for a static [2, 2] method input.
  std::vector<uint8_t> wrong_shape =
      bundle({{{1, 2, 3, 4}, {2, 3, 4, 5}, {4}}});
  Method& third = load(wrong_shape);
  EXPECT_NE(load_bundled_input(third, wrong_shape.data(), 0), Error::Ok);
  EXPECT_TRUE(logs.contains({"input 0 does not fit"}));
}

TEST_F(BundledProgramTest, TruncatedOrForeignFilesAreRejected) {
  std::vector<uint8_t> file = bundle({{{1, 2, 3, 4}, {2, 3, 4, 5}}});
  const void* data = nullptr;
  size_t size = 0;
  LogCapture logs;
  EXPECT_EQ(get_program_data(file.data(), file.size() / 2, &data, &size),
            Error::InvalidProgram);
  EXPECT_TRUE(logs.contains({"fails verification"}));

  // Not a bundled program: the data is taken as the program itself.
  std::vector<uint8_t> plain = build_program(add_one_program());
  EXPECT_FALSE(is_bundled_program(plain.data(), plain.size()));
  ASSERT_EQ(get_program_data(plain.data(), plain.size(), &data, &size),
            Error::Ok);
  EXPECT_EQ(data, plain.data());
  EXPECT_EQ(size, plain.size());
}

} // namespace
