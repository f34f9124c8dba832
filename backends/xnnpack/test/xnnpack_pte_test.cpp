// A .pte exported by the Python pipeline with XnnpackPartitioner
// (test/backends/test_xnnpack_partitioner.py writes the fixture), loaded
// through Program and Method: the emitted DelegateCall, delegate data and
// compile specs reach XnnpackBackend, and the output matches eager's (a
// classifier, a transformer encoder layer); a second execute allocates
// nothing from the C++ heap.

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/backends/xnnpack/test/test_util.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/heap_allocations.h>
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

// Loads fixture `name`.pte, runs it on `name`_input.bin (of `input_sizes`)
// and compares with eager's `name`_expected.bin; then executes again and
// counts the heap allocations of that steady-state call.
void expect_fixture_runs(const std::string& name,
                         const std::vector<int32_t>& input_sizes,
                         float tolerance) {
  ASSERT_EQ(register_xnnpack_backend(), Error::Ok);
  const std::vector<uint8_t> pte = read_fixture((name + ".pte").c_str());
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
      input_sizes, as_floats(read_fixture((name + "_input.bin").c_str())));
  ASSERT_EQ(method->set_input(*input, 0), Error::Ok);
  ASSERT_EQ(method->execute(), Error::Ok);
  const auto& out = method->get_output(0).toTensor();
  const float* data = out.const_data_ptr<float>();
  expect_near(std::vector<float>(data, data + out.numel()),
              as_floats(read_fixture((name + "_expected.bin").c_str())),
              tolerance);

  // Host steps and XNNPACK runtimes reuse what the first call set up.
  const long before = runtime::testing::heap_allocations();
  ASSERT_EQ(method->execute(), Error::Ok);
  EXPECT_EQ(runtime::testing::heap_allocations() - before, 0)
      << "operator new calls in a steady-state execute of " << name;
}

TEST(XnnpackPte, ExportedClassifierRunsThroughMethod) {
  expect_fixture_runs("conv_classifier", {1, 3, 8, 8}, 1e-4f);
}

// A pre-norm transformer encoder layer: layer norm and safe softmax fused
// host steps, batch matmuls, transposes, slices and GELU on the host.
TEST(XnnpackPte, ExportedEncoderLayerRunsThroughMethod) {
  expect_fixture_runs("encoder_layer", {1, 9, 32}, 1e-4f);
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
