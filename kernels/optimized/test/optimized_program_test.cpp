// Whole programs on the default path: .pte files exported with plain
// to_edge (test/ops/test_optimized_kernels.py writes the fixtures) run
// through Program and Method on the registered optimized kernels (portable
// for the rest), match eager's outputs, and a second, steady-state execute
// makes no operator new call: scratch is reused (kernels/optimized/README.md,
// "Threads and memory"), at 1 and 2 threads of the process-wide pool.

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/tensor/tensor.h>
#include <executorch/extension/threadpool/threadpool.h>
#include <executorch/kernels/optimized/register_optimized_kernels.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/heap_allocations.h>
#include <executorch/runtime/testing/managed_memory.h>

namespace {

using executorch::runtime::Error;

std::vector<uint8_t> read_bytes(const std::string& name) {
  std::ifstream in(std::string(OPTIMIZED_TEST_FIXTURES) + "/" + name,
                   std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> read_floats(const std::string& name) {
  const std::vector<uint8_t> bytes = read_bytes(name);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

class OptimizedProgram : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(executorch::kernels::register_optimized_kernels(), Error::Ok);
  }
  void SetUp() override {
    ASSERT_TRUE(executorch::extension::threadpool::get_threadpool()
                    ->_unsafe_reset_threadpool(GetParam()));
  }
  void TearDown() override {
    executorch::extension::threadpool::get_threadpool()
        ->_unsafe_reset_threadpool(0);
  }

  // Runs fixture `name` on its input (of `input_sizes`), compares every
  // output, flattened in order, with eager's (float32: rtol and atol
  // 1e-4, as test_optimized_kernels.py), then executes again and counts.
  void expect_runs(const std::string& name,
                   const std::vector<int32_t>& input_sizes) {
    const std::vector<uint8_t> pte = read_bytes(name + ".pte");
    ASSERT_FALSE(pte.empty()) << name;
    executorch::runtime::testing::BufferDataLoader loader(pte);
    auto program = executorch::runtime::Program::load(&loader);
    ASSERT_EQ(program.error(), Error::Ok);
    auto meta = program->method_meta("forward");
    ASSERT_EQ(meta.error(), Error::Ok);
    executorch::runtime::testing::ManagedMemory memory(*meta);
    auto method = program->load_method("forward", memory.manager());
    ASSERT_EQ(method.error(), Error::Ok);

    auto input = executorch::extension::make_tensor_ptr(
        input_sizes, read_floats(name + "_input.bin"));
    ASSERT_EQ(method->set_input(*input, 0), Error::Ok);
    ASSERT_EQ(method->execute(), Error::Ok);
    const std::vector<float> want = read_floats(name + "_expected.bin");
    size_t at = 0;
    for (size_t o = 0; o < method->outputs_size(); ++o) {
      const auto& out = method->get_output(o).toTensor();
      const float* got = out.const_data_ptr<float>();
      ASSERT_LE(at + out.numel(), want.size()) << name << " output " << o;
      for (ssize_t i = 0; i < out.numel(); ++i, ++at) {
        ASSERT_LE(std::fabs(got[i] - want[at]),
                  1e-4f + 1e-4f * std::fabs(want[at]))
            << name << " output " << o << " element " << i;
      }
    }
    EXPECT_EQ(at, want.size()) << name << ": fewer outputs than eager's";

    const long before = executorch::runtime::testing::heap_allocations();
    ASSERT_EQ(method->execute(), Error::Ok);
    EXPECT_EQ(executorch::runtime::testing::heap_allocations() - before, 0)
        << "operator new calls in a steady-state execute of " << name;
  }
};

// Linear layers, bmm, softmax, layer norm, GELU, permutes, masks.
TEST_P(OptimizedProgram, AttentionMatchesEagerAndAllocatesNothingOnceWarm) {
  expect_runs("attention", {2, 19, 36});
}

// GEMM, grouped and depthwise convolutions, batch norm, pooling, means.
TEST_P(OptimizedProgram, ConvNetMatchesEagerAndAllocatesNothingOnceWarm) {
  expect_runs("convnet", {2, 3, 23, 21});
}

INSTANTIATE_TEST_SUITE_P(Threads,
                         OptimizedProgram,
                         ::testing::Values(1, 2),
                         [](const auto& info) {
                           return std::to_string(info.param) + "threads";
                         });

} // namespace
