// A delegate mixing XNNPACK and host steps, run directly and through a
// Method loaded from a .pte built with the runtime's program builder; thread
// settings; registration.

#include <cstring>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/backends/xnnpack/test/test_util.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/testing/log_capture.h>
#include <executorch/runtime/testing/method_harness.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {

using runtime::Error;
using runtime::testing::DelegateSpec;
using runtime::testing::InstructionSpec;
using runtime::testing::MethodHarness;
using runtime::testing::MethodSpec;
using runtime::testing::ProgramSpec;
using runtime::testing::ValueSpec;


// A small classifier on an NCHW image, with the layout changes explicit:
//   x [1, 3, 8, 8] -transpose-> NHWC -conv 3x3 + relu-> f [1, 8, 8, 4]
//   f -global avg pool-> [1, 1, 1, 4] -reshape-> [1, 4] -linear-> logits
//   f -transpose-> features [1, 4, 8, 8] (NCHW)
// The transposes run on the host; f crosses from the XNNPACK step to the
// last transpose through the backend's own buffer.
struct Classifier {
  std::vector<float> conv_w = random_values(4 * 3 * 3 * 3, -1, 1, 40);
  std::vector<float> conv_b = random_values(4, -1, 1, 41);
  std::vector<float> fc_w = random_values(5 * 4, -1, 1, 42);
  std::vector<float> fc_b = random_values(5, -1, 1, 43);

  std::vector<uint8_t> blob() const {
    BlobBuilder b;
    const uint32_t x = b.input({1, 3, 8, 8}, 0);
    const uint32_t logits = b.output({1, 5}, 1);
    const uint32_t features = b.output({1, 4, 8, 8}, 2);
    const uint32_t x_nhwc = b.tensor({1, 8, 8, 3});
    const uint32_t w = b.constant({4, 3, 3, 3}, conv_w);
    const uint32_t bias = b.constant({4}, conv_b);
    const uint32_t f = b.tensor({1, 8, 8, 4});
    const uint32_t pooled = b.tensor({1, 1, 1, 4});
    const uint32_t flat = b.tensor({1, 4});
    const uint32_t fw = b.constant({5, 4}, fc_w);
    const uint32_t fb = b.constant({5}, fc_b);
    b.node(NodeKind::XNNStaticTranspose,
           {x},
           x_nhwc,
           transpose_params({0, 2, 3, 1}));
    b.node(NodeKind::XNNConv2d,
           {x_nhwc, w, bias},
           f,
           conv_params(3, 1, 1, 1, 1, 3, 4),
           std::make_pair(0.0f, std::numeric_limits<float>::infinity()));
    b.node(NodeKind::XNNGlobalAvgPooling2d, {f}, pooled, keep_dims_params());
    b.node(NodeKind::XNNStaticReshape, {pooled}, flat, reshape_params({1, 4}));
    b.node(NodeKind::XNNFullyConnected,
           {flat, fw, fb},
           logits,
           fully_connected_params(false));
    b.node(NodeKind::XNNStaticTranspose,
           {f},
           features,
           transpose_params({0, 3, 1, 2}));
    return b.build();
  }

  // Logits, then NCHW features.
  std::pair<std::vector<float>, std::vector<float>> reference(
      const std::vector<float>& x_nchw) const {
    std::vector<float> x(x_nchw.size());
    for (size_t c = 0; c < 3; ++c) {
      for (size_t i = 0; i < 64; ++i) {
        x[i * 3 + c] = x_nchw[c * 64 + i];
      }
    }
    std::vector<float> f = conv_reference(
        x, {1, 8, 8, 3}, conv_w, 3, conv_b, 1, 1, 1, 1, {1, 8, 8, 4});
    std::vector<float> pooled(4, 0.0f);
    std::vector<float> features(f.size());
    for (size_t i = 0; i < 64; ++i) {
      for (size_t c = 0; c < 4; ++c) {
        const float v = std::max(f[i * 4 + c], 0.0f);
        pooled[c] += v / 64;
        features[c * 64 + i] = v;
      }
    }
    std::vector<float> logits(5);
    for (size_t o = 0; o < 5; ++o) {
      logits[o] = fc_b[o];
      for (size_t c = 0; c < 4; ++c) {
        logits[o] += pooled[c] * fc_w[o * 4 + c];
      }
    }
    return {logits, features};
  }
};

TEST(XnnpackDelegate, MixedStepsDirectlyWithChangingPointers) {
  const Classifier model;
  DelegateRunner runner;
  ASSERT_EQ(runner.init(model.blob()), Error::Ok);
  // Each run passes freshly allocated tensors, so the runtimes are set up
  // again with the new pointers.
  for (uint32_t seed : {50u, 51u}) {
    const std::vector<float> x = random_values(3 * 64, -1, 1, seed);
    std::vector<TensorPtr> out{output_tensor({1, 5}),
                               output_tensor({1, 4, 8, 8})};
    ASSERT_EQ(runner.run({input_tensor({1, 3, 8, 8}, x)}, out), Error::Ok);
    const auto want = model.reference(x);
    expect_near(values_of(out[0]), want.first, 1e-4f);
    expect_near(values_of(out[1]), want.second, 1e-4f);
  }
}

// Host and XNNPACK steps alternate, so every intermediate crosses steps and
// lives in the backend's arena, where values with disjoint lifetimes share
// memory; `a` stays live to the end and must not be overwritten.
TEST(XnnpackDelegate, AlternatingStepsKeepLiveValues) {
  BlobBuilder b;
  const Dims dims{4, 6};
  const uint32_t x = b.input(dims, 0);
  const uint32_t y = b.output(dims, 1);
  const uint32_t a = b.tensor(dims);
  b.node(NodeKind::XNNTanh, {x}, a);
  uint32_t last = a;
  for (int i = 0; i < 3; ++i) {
    const uint32_t negated = b.tensor(dims);
    const uint32_t squashed = b.tensor(dims);
    b.node(NodeKind::XNNNegate, {last}, negated);
    b.node(NodeKind::XNNTanh, {negated}, squashed);
    last = squashed;
  }
  b.node(NodeKind::XNNAdd, {a, last}, y);
  const std::vector<float> in = random_values(numel(dims), -2, 2, 54);
  std::vector<float> want;
  for (float v : in) {
    const float t = std::tanh(v);
    float chain = t;
    for (int i = 0; i < 3; ++i) {
      chain = std::tanh(-chain);
    }
    want.push_back(t + chain);
  }
  DelegateRunner runner;
  ASSERT_EQ(runner.init(b.build()), Error::Ok);
  std::vector<TensorPtr> out{output_tensor(sizes_of(dims))};
  ASSERT_EQ(runner.run({input_tensor(sizes_of(dims), in)}, out), Error::Ok);
  expect_near(values_of(out[0]), want, 1e-5f);
}

// A node whose output nothing reads still runs (into the backend's memory;
// XNNPACK would allocate nothing for it).
TEST(XnnpackDelegate, UnreadNodeOutputIsHarmless) {
  BlobBuilder b;
  const uint32_t x = b.input({2, 3}, 0);
  const uint32_t y = b.output({2, 3}, 1);
  const uint32_t unread = b.tensor({2, 3});
  b.node(NodeKind::XNNNegate, {x}, unread);
  b.node(NodeKind::XNNAbs, {x}, y);
  DelegateRunner runner;
  ASSERT_EQ(runner.init(b.build()), Error::Ok);
  const std::vector<float> in = random_values(6);
  std::vector<TensorPtr> out{output_tensor({2, 3})};
  ASSERT_EQ(runner.run({input_tensor({2, 3}, in)}, out), Error::Ok);
  std::vector<float> want(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    want[i] = std::fabs(in[i]);
  }
  expect_near(values_of(out[0]), want, 0.0f);
}

TEST(XnnpackDelegate, ThreadCountsAgree) {
  const Classifier model;
  const std::vector<float> x = random_values(3 * 64, -1, 1, 52);
  std::vector<std::vector<float>> results;
  for (uint8_t threads : {uint8_t{1}, uint8_t{2}}) {
    uint8_t value[4] = {threads, 0, 0, 0};
    DelegateRunner runner;
    ASSERT_EQ(runner.init(model.blob(), {{"num_threads", {value, 4}}}),
              Error::Ok);
    std::vector<TensorPtr> out{output_tensor({1, 5}),
                               output_tensor({1, 4, 8, 8})};
    ASSERT_EQ(runner.run({input_tensor({1, 3, 8, 8}, x)}, out), Error::Ok);
    results.push_back(values_of(out[0]));
  }
  expect_near(results[0], results[1], 1e-6f);
  set_num_threads(1);
  DelegateRunner runner;
  EXPECT_EQ(runner.init(model.blob()), Error::Ok);
  set_num_threads(0);
}

TEST(XnnpackDelegate, BadNumThreadsSpec) {
  uint8_t value[9] = {};
  DelegateRunner runner;
  runtime::testing::LogCapture log;
  EXPECT_EQ(runner.init(Classifier().blob(), {{"num_threads", {value, 9}}}),
            Error::InvalidArgument);
  EXPECT_TRUE(log.contains({"num_threads", "9 bytes"}));
}

TEST(XnnpackDelegate, RegistrationIsIdempotent) {
  EXPECT_EQ(register_xnnpack_backend(), Error::Ok);
  EXPECT_EQ(register_xnnpack_backend(), Error::Ok);
  EXPECT_NE(runtime::get_backend_class(kXnnpackBackendId), nullptr);
}

// The classifier as a one-instruction program: a DelegateCall with args
// (x, logits, features), the blob in a segment or inline.
ProgramSpec classifier_program(const Classifier& model, bool inline_blob) {
  ProgramSpec spec;
  MethodSpec method;
  method.values = {
      ValueSpec::Tensor(runtime::testing::planned_float({1, 3, 8, 8}, 0)),
      ValueSpec::Tensor(runtime::testing::planned_float({1, 5}, 1024)),
      ValueSpec::Tensor(runtime::testing::planned_float({1, 4, 8, 8}, 1536)),
  };
  method.inputs = {0};
  method.outputs = {1, 2};
  method.chains = {{InstructionSpec::Delegate(0, {0, 1, 2})}};
  method.non_const_buffer_sizes = {0, 1536 + 4 * 256};
  DelegateSpec delegate;
  delegate.id = kXnnpackBackendId;
  delegate.inline_data = inline_blob;
  if (inline_blob) {
    spec.inline_delegate_data = {model.blob()};
  } else {
    spec.segments = {model.blob()};
    delegate.index = static_cast<uint32_t>(
        runtime::testing::first_extra_segment_index(spec));
  }
  method.delegates = {delegate};
  spec.methods = {method};
  return spec;
}

TEST(XnnpackDelegate, RunsThroughMethod) {
  ASSERT_EQ(register_xnnpack_backend(), Error::Ok);
  const Classifier model;
  for (bool inline_blob : {false, true}) {
    SCOPED_TRACE(inline_blob ? "inline blob" : "blob in a segment");
    MethodHarness harness;
    ASSERT_EQ(harness.load(classifier_program(model, inline_blob)), Error::Ok);
    const std::vector<float> x = random_values(3 * 64, -1, 1, 53);
    const TensorPtr input = input_tensor({1, 3, 8, 8}, x);
    ASSERT_EQ(harness.method().set_input(*input, 0), Error::Ok);
    ASSERT_EQ(harness.method().execute(), Error::Ok);
    const auto want = model.reference(x);
    for (size_t j = 0; j < 2; ++j) {
      const auto& t = harness.method().get_output(j).toTensor();
      const float* data = t.const_data_ptr<float>();
      expect_near(std::vector<float>(data, data + t.numel()),
                  j == 0 ? want.first : want.second,
                  1e-4f);
    }
  }
}

TEST(XnnpackDelegate, MalformedBlobFailsMethodLoad) {
  ASSERT_EQ(register_xnnpack_backend(), Error::Ok);
  Classifier model;
  ProgramSpec spec = classifier_program(model, false);
  // The header magic ("XH00" at byte 4).
  spec.segments[0][4] = '?';
  MethodHarness harness;
  runtime::testing::LogCapture log;
  EXPECT_EQ(harness.load(spec), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"identifier"}));
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
