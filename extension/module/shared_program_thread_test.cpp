// The threading contract (runtime/executor/program.h, method.h): a loaded
// Program is shared read-only; each thread loads and runs its own Method.
// N threads each run their own Methods of one Program many times and must
// get exactly the results of a single thread. scripts/tsan_test.sh builds
// this test with ThreadSanitizer (EXECUTORCH_SANITIZE=thread) and runs it.

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/testing/buffer_data_loader.h>
#include <executorch/runtime/testing/managed_memory.h>
#include <executorch/runtime/testing/test_kernels.h>
#include <executorch/runtime/testing/test_programs.h>

using executorch::extension::make_tensor_ptr;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Method;
using executorch::runtime::Program;
using executorch::runtime::Result;
using namespace executorch::runtime::testing;

namespace {

constexpr int kThreads = 4;
constexpr int kRuns = 200;

// Results of one thread's work: for each run, forward(x) then add_constant
// of forward's output, where x depends on the thread and the run.
using Trace = std::vector<std::vector<float>>;

std::vector<float> input_for(int thread, int run) {
  const float base = static_cast<float>(thread * 1000 + run);
  return {base, base + 0.25f, -base, 0.5f * base};
}

std::vector<float> floats(const EValue& value) {
  const auto& t = value.toTensor();
  return {t.const_data_ptr<float>(), t.const_data_ptr<float>() + t.numel()};
}

std::vector<uint8_t> two_method_program() {
  ProgramSpec spec;
  spec.methods = {add_one_method("forward"),
                  add_constant_method("add_constant")};
  spec.constants = {float_bytes({1, 2, 3, 4})};
  return build_program(spec);
}

// One thread's work on its own Methods of the shared `program`.
Trace run_methods(const Program& program, int thread) {
  ManagedMemory forward_memory(*program.method_meta("forward"));
  ManagedMemory constant_memory(*program.method_meta("add_constant"));
  Result<Method> forward =
      program.load_method("forward", forward_memory.manager());
  Result<Method> add_constant =
      program.load_method("add_constant", constant_memory.manager());
  Trace trace;
  if (!forward.ok() || !add_constant.ok()) {
    ADD_FAILURE() << "thread " << thread << ": load_method failed";
    return trace;
  }
  for (int run = 0; run < kRuns; ++run) {
    TensorPtr x = make_tensor_ptr({2, 2}, input_for(thread, run));
    EXPECT_EQ(forward->set_input(EValue(*x), 0), Error::Ok);
    EXPECT_EQ(forward->execute(), Error::Ok);
    EXPECT_EQ(add_constant->set_input(forward->get_output(0), 0), Error::Ok);
    EXPECT_EQ(add_constant->execute(), Error::Ok);
    trace.push_back(floats(forward->get_output(0)));
    trace.push_back(floats(add_constant->get_output(0)));
  }
  return trace;
}

// The same work through a Module made from the shared program.
Trace run_module(std::shared_ptr<Program> program, int thread) {
  Module module(std::move(program));
  Trace trace;
  for (int run = 0; run < kRuns; ++run) {
    TensorPtr x = make_tensor_ptr({2, 2}, input_for(thread, run));
    Result<EValue> y = module.get("forward", *x);
    EXPECT_TRUE(y.ok());
    if (!y.ok()) {
      return trace;
    }
    trace.push_back(floats(*y));
    Result<EValue> z = module.get("add_constant", *y);
    EXPECT_TRUE(z.ok());
    if (!z.ok()) {
      return trace;
    }
    trace.push_back(floats(*z));
  }
  return trace;
}

// Runs work(thread) for every thread, first one after another, then all at
// once, and checks that both give the same traces.
template <typename Work>
void expect_concurrent_matches_sequential(Work work) {
  std::vector<Trace> sequential(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    sequential[t] = work(t);
  }
  std::vector<Trace> concurrent(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { concurrent[t] = work(t); });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(concurrent[t].size(), 2u * kRuns) << "thread " << t;
    EXPECT_EQ(concurrent[t], sequential[t]) << "thread " << t;
  }
  // The results are the computation's, not just consistent: x + 1, then
  // (x + 1) + 2 * {1, 2, 3, 4}.
  const std::vector<float> x = input_for(1, 7);
  EXPECT_EQ(sequential[1][14],
            (std::vector<float>{x[0] + 1, x[1] + 1, x[2] + 1, x[3] + 1}));
  EXPECT_EQ(sequential[1][15],
            (std::vector<float>{x[0] + 3, x[1] + 5, x[2] + 7, x[3] + 9}));
}

class SharedProgramThreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Registration happens once, before any thread runs.
    register_test_kernels();
  }
  std::vector<uint8_t> bytes_ = two_method_program();
  BufferDataLoader loader_{bytes_.data(), bytes_.size()};
};

TEST_F(SharedProgramThreadTest, MethodsOfOneProgramRunInParallel) {
  Result<Program> program = Program::load(&loader_);
  ASSERT_TRUE(program.ok());
  expect_concurrent_matches_sequential(
      [&](int thread) { return run_methods(*program, thread); });
}

TEST_F(SharedProgramThreadTest, ModulesSharingOneProgramRunInParallel) {
  Module owner(std::make_unique<executorch::extension::BufferDataLoader>(
      bytes_.data(), bytes_.size()));
  ASSERT_EQ(owner.load(), Error::Ok);
  std::shared_ptr<Program> program = owner.program();
  expect_concurrent_matches_sequential(
      [&](int thread) { return run_module(program, thread); });
}

} // namespace
