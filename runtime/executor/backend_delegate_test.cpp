#include <executorch/runtime/executor/method.h>

#include <cstring>

#include <gtest/gtest.h>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/method_harness.h>
#include <executorch/runtime/testing/owned_tensor.h>
#include <executorch/runtime/testing/test_programs.h>

using namespace executorch::runtime;
using namespace executorch::runtime::testing;
using executorch::aten::Tensor;

namespace {

// A backend whose processed blob is one float that execute() adds to its
// input; the compile spec "scale" (one float) multiplies the input first.
class AddBackend final : public BackendInterface {
 public:
  struct Handle {
    float increment;
    float scale;
  };

  explicit AddBackend(bool available = true, Error init_error = Error::Ok)
      : available_(available), init_error_(init_error) {}

  bool is_available() const override {
    return available_;
  }

  Result<DelegateHandle*> init(BackendInitContext& context,
                               FreeableBuffer* processed,
                               ArrayRef<CompileSpec> specs) const override {
    if (init_error_ != Error::Ok) {
      return init_error_;
    }
    if (processed->size() != sizeof(float)) {
      return Error::DelegateInvalidCompatibility;
    }
    auto* handle = context.get_runtime_allocator()->allocateInstance<Handle>();
    if (handle == nullptr) {
      return Error::DelegateMemoryAllocationFailed;
    }
    std::memcpy(&handle->increment, processed->data(), sizeof(float));
    handle->scale = 1.0f;
    for (const CompileSpec& spec : specs) {
      if (std::strcmp(spec.key, "scale") == 0 &&
          spec.value.nbytes == sizeof(float)) {
        std::memcpy(&handle->scale, spec.value.buffer, sizeof(float));
      }
    }
    // The blob is copied, so release it now.
    processed->Free();
    ++inits;
    return static_cast<DelegateHandle*>(handle);
  }

  Error execute(BackendExecutionContext& context,
                DelegateHandle* handle,
                Span<EValue*> args) const override {
    if (args.size() != 2 || !args[0]->isTensor() || !args[1]->isTensor()) {
      return Error::InvalidArgument;
    }
    const auto* h = static_cast<const Handle*>(handle);
    const Tensor& in = args[0]->toTensor();
    Tensor& out = args[1]->toTensor();
    for (ssize_t i = 0; i < in.numel(); ++i) {
      out.mutable_data_ptr<float>()[i] =
          in.const_data_ptr<float>()[i] * h->scale + h->increment;
    }
    return Error::Ok;
  }

  // execute() writes its second arg.
  size_t num_outputs(DelegateHandle* handle) const override {
    return 1;
  }

  void destroy(DelegateHandle* handle) const override {
    ++destroys;
  }

  mutable int inits = 0;
  mutable int destroys = 0;

 private:
  bool available_;
  Error init_error_;
};

AddBackend add_backend;
AddBackend unavailable_backend(/*available=*/false);
AddBackend failing_backend(true, Error::DelegateInvalidCompatibility);

class BackendDelegateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static const bool registered =
        register_backend({"TestAddBackend", &add_backend}) == Error::Ok &&
        register_backend({"TestUnavailableBackend", &unavailable_backend}) ==
            Error::Ok &&
        register_backend({"TestFailingBackend", &failing_backend}) == Error::Ok;
    ASSERT_TRUE(registered);
  }

  // x -> out through delegate 0 of backend `id`, its blob stored inline or
  // in a segment.
  static ProgramSpec delegate_program(const char* id, bool inline_data) {
    const std::vector<uint8_t> blob = float_bytes({0.5f});
    ProgramSpec p;
    MethodSpec m;
    m.values = {ValueSpec::Tensor(planned_float({2}, 0)),
                ValueSpec::Tensor(planned_float({2}, 16))};
    m.inputs = {0};
    m.outputs = {1};
    m.chains = {{InstructionSpec::Delegate(0, {0, 1})}};
    m.non_const_buffer_sizes = {0, 32};
    DelegateSpec d;
    d.id = id;
    d.inline_data = inline_data;
    d.compile_specs = {{"scale", float_bytes({10.0f})}};
    if (inline_data) {
      p.inline_delegate_data = {blob};
    } else {
      p.segments = {blob};
      d.index = static_cast<uint32_t>(first_extra_segment_index(p));
    }
    m.delegates = {d};
    p.methods = {m};
    return p;
  }
};

TEST_F(BackendDelegateTest, RunsInlineAndSegmentDelegates) {
  for (bool inline_data : {true, false}) {
    const int inits = add_backend.inits;
    const int destroys = add_backend.destroys;
    {
      MethodHarness harness;
      ASSERT_EQ(harness.load(delegate_program("TestAddBackend", inline_data)),
                Error::Ok);
      EXPECT_EQ(add_backend.inits, inits + 1);
      MethodMeta meta = harness.method().method_meta();
      EXPECT_EQ(meta.num_backends(), 1u);
      EXPECT_STREQ(*meta.get_backend_name(0), "TestAddBackend");
      EXPECT_TRUE(meta.uses_backend("TestAddBackend"));
      OwnedTensor x = float_tensor({2}, {1, 2});
      ASSERT_EQ(harness.method().set_input(x.tensor(), 0), Error::Ok);
      ASSERT_EQ(harness.method().execute(), Error::Ok);
      const float* out =
          harness.method().get_output(0).toTensor().const_data_ptr<float>();
      EXPECT_EQ(out[0], 10.5f);
      EXPECT_EQ(out[1], 20.5f);
    }
    // Destroyed with the method.
    EXPECT_EQ(add_backend.destroys, destroys + 1);
  }
}

TEST_F(BackendDelegateTest, ExecuteFailureIsReported) {
  ProgramSpec spec = delegate_program("TestAddBackend", true);
  spec.methods[0].chains[0][0].args = {0};
  MethodHarness harness;
  ASSERT_EQ(harness.load(spec), Error::Ok);
  OwnedTensor x = float_tensor({2}, {1, 2});
  ASSERT_EQ(harness.method().set_input(x.tensor(), 0), Error::Ok);
  LogCapture logs;
  EXPECT_EQ(harness.method().execute(), Error::InvalidArgument);
  EXPECT_TRUE(logs.contains({"instruction 0", "TestAddBackend", "forward"}));
}

TEST_F(BackendDelegateTest, UnavailableBackendIsNotFound) {
  MethodHarness harness;
  LogCapture logs;
  EXPECT_EQ(harness.load(delegate_program("TestUnavailableBackend", true)),
            Error::NotFound);
  EXPECT_TRUE(logs.contains({"TestUnavailableBackend", "not available"}));
}

TEST_F(BackendDelegateTest, InitFailurePropagates) {
  MethodHarness harness;
  LogCapture logs;
  EXPECT_EQ(harness.load(delegate_program("TestFailingBackend", true)),
            Error::DelegateInvalidCompatibility);
  EXPECT_TRUE(logs.contains({"TestFailingBackend", "delegate 0"}));
}

TEST_F(BackendDelegateTest, BadDataReferencesAreRejected) {
  ProgramSpec inline_spec = delegate_program("TestAddBackend", true);
  inline_spec.methods[0].delegates[0].index = 4;
  MethodHarness harness;
  {
    LogCapture logs;
    EXPECT_EQ(harness.load(inline_spec), Error::InvalidProgram);
    EXPECT_TRUE(logs.contains(
        {"Delegate 0 ('TestAddBackend')", "inline delegate data index 4"}));
    EXPECT_TRUE(logs.contains({"index 4 out of range: 1 entries"}));
  }
  ProgramSpec segment_spec = delegate_program("TestAddBackend", false);
  segment_spec.methods[0].delegates[0].index = 9;
  LogCapture logs;
  EXPECT_EQ(harness.load(segment_spec), Error::InvalidProgram);
  EXPECT_TRUE(
      logs.contains({"Delegate 0 ('TestAddBackend')", "segment index 9"}));
  EXPECT_TRUE(logs.contains({"Segment index 9 out of range"}));
}

TEST_F(BackendDelegateTest, FailedLoadDestroysInitializedDelegates) {
  // Delegate 0 initializes; delegate 1 fails; delegate 0 must be destroyed.
  ProgramSpec spec = delegate_program("TestAddBackend", true);
  DelegateSpec failing = spec.methods[0].delegates[0];
  failing.id = "TestFailingBackend";
  spec.methods[0].delegates.push_back(failing);
  const int destroys = add_backend.destroys;
  MethodHarness harness;
  EXPECT_EQ(harness.load(spec), Error::DelegateInvalidCompatibility);
  EXPECT_EQ(add_backend.destroys, destroys + 1);
}

// Delegate arg `arg` of delegate_program() made a constant {1, 2} of the
// program.
ProgramSpec with_constant_arg(ProgramSpec spec, size_t arg) {
  TensorSpec constant;
  constant.sizes = {2};
  constant.data_buffer_idx = 1;
  spec.constants = {float_bytes({1, 2})};
  MethodSpec& m = spec.methods[0];
  m.values[arg] = ValueSpec::Tensor(constant);
  m.inputs.clear();
  return spec;
}

TEST_F(BackendDelegateTest, OutputThatIsAConstantIsRefused) {
  // The backend would write into the program's bytes, which may be a
  // read-only mapping of the file.
  MethodHarness harness;
  LogCapture logs;
  EXPECT_EQ(harness.load(
                with_constant_arg(delegate_program("TestAddBackend", true), 1)),
            Error::InvalidProgram);
  EXPECT_TRUE(
      logs.contains({"instruction 0: delegate of backend "
                     "'TestAddBackend' writes its argument 1, value 1",
                     "constants are read-only"}));
}

TEST_F(BackendDelegateTest, InputThatIsAConstantRuns) {
  MethodHarness harness;
  ASSERT_EQ(harness.load(
                with_constant_arg(delegate_program("TestAddBackend", true), 0)),
            Error::Ok);
  ASSERT_EQ(harness.method().execute(), Error::Ok);
  const Tensor& out = harness.method().get_output(0).toTensor();
  EXPECT_FLOAT_EQ(out.const_data_ptr<float>()[0], 1 * 10.0f + 0.5f);
  EXPECT_FLOAT_EQ(out.const_data_ptr<float>()[1], 2 * 10.0f + 0.5f);
}

} // namespace
