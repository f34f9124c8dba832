#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/flat_tensor/test/ptd_builder.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/program_builder.h>
#include <executorch/runtime/testing/temp_file.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using executorch::aten::ScalarType;
using executorch::extension::BufferDataLoader;
using executorch::extension::FlatTensorDataMap;
using executorch::extension::make_tensor_ptr;
using executorch::extension::Module;
using executorch::extension::testing::build_ptd;
using executorch::extension::testing::PtdEntry;
using executorch::runtime::Error;
using executorch::runtime::Result;
using executorch::runtime::testing::TempFile;
namespace rt = executorch::runtime::testing;

namespace {

const std::vector<float> kWeight = {1, 2, 3, 4};

std::vector<uint8_t> weight_bytes() {
  return executorch::extension::testing::float_bytes(kWeight);
}

// "forward": x + 2 * weight, where weight ([2, 2] float) is stored outside
// the .pte as "linear.weight".
std::vector<uint8_t> external_weight_program() {
  rt::ProgramSpec spec;
  spec.methods = {rt::add_constant_method("forward")};
  rt::TensorSpec& weight = spec.methods[0].values[1].tensor;
  weight.data_buffer_idx = 0;
  weight.external_name = "linear.weight";
  return rt::build_program(spec);
}

std::vector<uint8_t> good_ptd() {
  return build_ptd({{"other", {1, 2, 3}, std::nullopt},
                    {"linear.weight", weight_bytes(), {{2, 2}}}});
}

TEST(FlatTensorDataMapTest, ReadsKeysDataAndLayouts) {
  const std::vector<uint8_t> bytes = good_ptd();
  BufferDataLoader loader(bytes.data(), bytes.size());
  Result<FlatTensorDataMap> map = FlatTensorDataMap::load(&loader);
  ASSERT_EQ(map.error(), Error::Ok);
  EXPECT_EQ(*map->get_num_keys(), 2u);
  EXPECT_STREQ(*map->get_key(1), "linear.weight");
  EXPECT_EQ(map->get_key(2).error(), Error::InvalidArgument);

  auto data = map->get_data("linear.weight");
  ASSERT_EQ(data.error(), Error::Ok);
  ASSERT_EQ(data->size(), 16u);
  EXPECT_EQ(std::memcmp(data->data(), kWeight.data(), 16), 0);

  auto layout = map->get_tensor_layout("linear.weight");
  ASSERT_EQ(layout.error(), Error::Ok);
  EXPECT_EQ(layout->scalar_type(), ScalarType::Float);
  EXPECT_EQ(layout->nbytes(), 16u);
  EXPECT_EQ(layout->sizes().size(), 2u);

  // Raw bytes have no layout; unknown keys are NotFound.
  EXPECT_EQ(map->get_tensor_layout("other").error(), Error::NotFound);
  EXPECT_EQ(map->get_data("missing").error(), Error::NotFound);

  float into[4] = {};
  EXPECT_EQ(map->load_data_into("linear.weight", into, sizeof(into)),
            Error::Ok);
  EXPECT_EQ(into[3], 4.0f);
  EXPECT_EQ(map->load_data_into("linear.weight", into, 17),
            Error::InvalidArgument);
}

TEST(FlatTensorDataMapTest, RefusesMalformedFiles) {
  struct Case {
    const char* what;
    std::vector<uint8_t> bytes;
    Error expected;
    const char* log;
  };
  std::vector<Case> cases;
  cases.push_back({"not a ptd", rt::build_program(rt::add_one_program()),
                   Error::InvalidExternalData, "no FH01 header"});
  std::vector<uint8_t> truncated = good_ptd();
  truncated.resize(truncated.size() - 8);
  cases.push_back({"truncated", truncated, Error::InvalidExternalData,
                   ".ptd truncated"});
  std::vector<uint8_t> bad_identifier = good_ptd();
  bad_identifier[4] = 'X';
  cases.push_back({"identifier", bad_identifier, Error::InvalidExternalData,
                   "file identifier"});
  cases.push_back({"newer version", build_ptd({}, 7), Error::NotSupported,
                   "version 7"});
  // A tensor layout needing more bytes than its segment holds.
  cases.push_back(
      {"short tensor",
       build_ptd({{"w", weight_bytes(), {{4, 4}}}}),
       Error::InvalidExternalData, "needs 64 bytes"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    rt::LogCapture logs;
    BufferDataLoader loader(c.bytes.data(), c.bytes.size());
    EXPECT_EQ(FlatTensorDataMap::load(&loader).error(), c.expected);
    EXPECT_TRUE(logs.contains({c.log}));
  }
}

class ModuleDataFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rt::register_test_kernels();
  }
  TempFile program_{external_weight_program()};
  executorch::extension::TensorPtr x_ =
      make_tensor_ptr({2, 2}, std::vector<float>{10, 20, 30, 40});
};

TEST_F(ModuleDataFilesTest, RunsWithWeightsFromTheDataFile) {
  TempFile data(good_ptd());
  for (auto mode : {Module::LoadMode::File, Module::LoadMode::Mmap}) {
    Module module(program_.path(), data.path(), mode);
    auto out = module.forward(x_);
    ASSERT_EQ(out.error(), Error::Ok);
    const float* y = out->at(0).toTensor().const_data_ptr<float>();
    EXPECT_EQ(std::vector<float>(y, y + 4),
              (std::vector<float>{12, 24, 36, 48}));
  }
}

TEST_F(ModuleDataFilesTest, MissingDataFileNamesTheTensor) {
  rt::LogCapture logs;
  Module module(program_.path());
  EXPECT_EQ(module.forward(x_).error(), Error::NotFound);
  EXPECT_TRUE(logs.contains({"'linear.weight'", "stored outside the .pte"}));
}

TEST_F(ModuleDataFilesTest, DataFileWithoutTheKeyNamesIt) {
  TempFile data(build_ptd({{"encoder.weight", weight_bytes(), {{2, 2}}}}));
  rt::LogCapture logs;
  Module module(program_.path(), std::vector<std::string>{data.path()});
  EXPECT_EQ(module.forward(x_).error(), Error::NotFound);
  EXPECT_TRUE(logs.contains({"'linear.weight' is not in the data file"}));
}

TEST_F(ModuleDataFilesTest, MismatchedLayoutNamesTheTensor) {
  std::vector<uint8_t> bytes(24 * sizeof(float));
  TempFile data(build_ptd({{"linear.weight", bytes, {{4, 6}}}}));
  rt::LogCapture logs;
  Module module(program_.path(), data.path());
  EXPECT_EQ(module.forward(x_).error(), Error::InvalidExternalData);
  EXPECT_TRUE(logs.contains({"'linear.weight'", "another export"}));
}

TEST_F(ModuleDataFilesTest, UnreadableDataFileFailsTheLoad) {
  rt::LogCapture logs;
  Module module(program_.path(), "/nonexistent/weights.ptd");
  EXPECT_NE(module.load(), Error::Ok);
  EXPECT_TRUE(logs.contains({"cannot open the data file",
                             "/nonexistent/weights.ptd"}));
}

} // namespace
