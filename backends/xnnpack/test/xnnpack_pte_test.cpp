// A .pte exported by the Python pipeline with XnnpackPartitioner
// (test/backends/test_xnnpack_partitioner.py writes the fixture), loaded
// through Program and Method: the emitted DelegateCall, delegate data and
// compile specs reach XnnpackBackend, and the output matches eager's.

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/backends/xnnpack/test/test_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/managed_memory.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {

using runtime::Error;

std::vector<uint8_t> read_fixture(const char* name) {
  std::ifstream in(std::string(XNNPACK_TEST_FIXTURES) + "/" + name,
                   std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

TEST(XnnpackPte, ExportedClassifierRunsThroughMethod) {
  ASSERT_EQ(register_xnnpack_backend(), Error::Ok);
  const std::vector<uint8_t> pte = read_fixture("conv_classifier.pte");
  ASSERT_FALSE(pte.empty());
  runtime::testing::BufferDataLoader loader(pte);
  runtime::Result<runtime::Program> program = runtime::Program::load(&loader);
  ASSERT_EQ(program.error(), Error::Ok);
  runtime::Result<runtime::MethodMeta> meta = program->method_meta("forward");
  ASSERT_EQ(meta.error(), Error::Ok);
  runtime::testing::ManagedMemory memory(*meta);
  runtime::Result<runtime::Method> method =
      program->load_method("forward", memory.manager());
  ASSERT_EQ(method.error(), Error::Ok);

  const TensorPtr input = input_tensor(
      {1, 3, 8, 8}, as_floats(read_fixture("conv_classifier_input.bin")));
  ASSERT_EQ(method->set_input(*input, 0), Error::Ok);
  ASSERT_EQ(method->execute(), Error::Ok);
  const auto& out = method->get_output(0).toTensor();
  const float* data = out.const_data_ptr<float>();
  expect_near(std::vector<float>(data, data + out.numel()),
              as_floats(read_fixture("conv_classifier_expected.bin")),
              1e-4f);
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
