// Runs a blob written by the Python serializer, so its layout and the C++
// parser are tested against each other.

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/test/test_util.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {

std::vector<uint8_t> read_fixture(const char* name) {
  std::ifstream in(std::string(XNNPACK_TEST_FIXTURES) + "/" + name,
                   std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// linear_relu.xnb: y = relu(x @ w^T + b), w = arange(12).reshape(4, 3) / 10
// - 0.5, b = [0.5, -0.5, 0.25, -0.25]; x [2, 3], y [2, 4].
TEST(XnnpackFixture, PythonSerializedLinearRelu) {
  const std::vector<uint8_t> blob = read_fixture("linear_relu.xnb");
  ASSERT_FALSE(blob.empty());
  DelegateRunner runner;
  ASSERT_EQ(runner.init(blob), runtime::Error::Ok);
  const std::vector<float> x = random_values(6, -2, 2, 60);
  const float bias[4] = {0.5f, -0.5f, 0.25f, -0.25f};
  std::vector<float> want;
  for (size_t r = 0; r < 2; ++r) {
    for (size_t o = 0; o < 4; ++o) {
      float sum = bias[o];
      for (size_t i = 0; i < 3; ++i) {
        sum += x[r * 3 + i] * (static_cast<float>(o * 3 + i) / 10 - 0.5f);
      }
      want.push_back(std::max(sum, 0.0f));
    }
  }
  std::vector<TensorPtr> out{output_tensor({2, 4})};
  ASSERT_EQ(runner.run({input_tensor({2, 3}, x)}, out), runtime::Error::Ok);
  expect_near(values_of(out[0]), want, 1e-5f);
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
