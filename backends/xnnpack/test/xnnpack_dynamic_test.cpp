// Graphs with dynamic inputs: run at several sizes within the bounds, the
// delegate recomputes every value's dims, rebuilds its runtimes and resizes
// its outputs; inputs past the bounds and malformed dynamic specs fail with
// errors naming what was wrong.

#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/test/test_util.h>
#include <executorch/runtime/testing/log_capture.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {

using runtime::Error;
using runtime::testing::LogCapture;
using fb_xnnpack::SliceMode;

constexpr uint32_t kMaxBatch = 4;
// Outputs the delegate resizes within their bound, as a method plans them.
constexpr runtime::TensorShapeDynamism kDynamic =
    runtime::TensorShapeDynamism::DYNAMIC_BOUND;
const std::vector<float> kWeight = random_values(4 * 6, -1, 1, 7);
const std::vector<float> kBias = random_values(4, -1, 1, 8);

// x [B <= 4, 6] -> fully_connected -> [B, 4] -> reshape (dim 0 copied) to
// [B, 2, 2] -> tanh -> slice [:, 1:2, :] (dim 0 to the end) -> reshape
// (dim 0 inferred) to y [2 * B]: XNNPACK, host and XNNPACK steps.
struct DynamicGraph {
  BlobBuilder b;
  uint32_t x, y;
  size_t reshape_node = 1, slice_node = 3;

  DynamicGraph() {
    x = b.input({kMaxBatch, 6}, 0);
    const uint32_t w = b.constant({4, 6}, kWeight);
    const uint32_t bias = b.constant({4}, kBias);
    const uint32_t h = b.tensor({kMaxBatch, 4});
    const uint32_t r = b.tensor({kMaxBatch, 2, 2});
    const uint32_t t = b.tensor({kMaxBatch, 2, 2});
    const uint32_t s = b.tensor({kMaxBatch, 1, 2});
    y = b.output({2 * kMaxBatch}, 1);
    b.node(NodeKind::XNNFullyConnected,
           {x, w, bias},
           h,
           fully_connected_params(false));
    b.node(NodeKind::XNNStaticReshape,
           {h},
           r,
           reshape_params({kMaxBatch, 2, 2}, {0, -1, -1}));
    b.node(NodeKind::XNNTanh, {r}, t);
    b.node(
        NodeKind::XNNStaticSlice,
        {t},
        s,
        slice_params({0, 1, 0},
                     {kMaxBatch, 1, 2},
                     {SliceMode::to_end, SliceMode::fixed, SliceMode::fixed}));
    b.node(NodeKind::XNNStaticReshape,
           {s},
           y,
           reshape_params({2 * kMaxBatch}, {-2}));
  }
};

std::vector<float> reference(const std::vector<float>& x, size_t batch) {
  std::vector<float> y;
  for (size_t n = 0; n < batch; ++n) {
    // Columns 2 and 3 of the linear layer's output row.
    for (size_t o = 2; o < 4; ++o) {
      double sum = kBias[o];
      for (size_t k = 0; k < 6; ++k) {
        sum += double(x[n * 6 + k]) * kWeight[o * 6 + k];
      }
      y.push_back(std::tanh(static_cast<float>(sum)));
    }
  }
  return y;
}

TEST(XnnpackDynamic, RunsAtEachSizeWithinTheBoundAndResizesOutputs) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(DynamicGraph().b.build()), Error::Ok);
  // Smallest, largest, between, the same again, and back to an earlier one.
  for (int32_t batch : {3, 1, 4, 2, 2, 3}) {
    SCOPED_TRACE(batch);
    const std::vector<float> x = random_values(batch * 6, -2, 2, batch);
    std::vector<TensorPtr> out{output_tensor({2 * kMaxBatch}, kDynamic)};
    ASSERT_EQ(runner.run({input_tensor({batch, 6}, x)}, out), Error::Ok);
    EXPECT_EQ(sizes_of(out[0]), std::vector<int32_t>{2 * batch});
    expect_near(values_of(out[0]), reference(x, batch), 1e-5f);
  }
}

// Named constants by key, counting the buffers freed, as a program's
// memory-mapped named data would be unmapped.
class CountingDataMap final : public runtime::NamedDataMap {
 public:
  std::map<std::string, std::vector<float>> data;
  mutable std::set<std::string> freed;

  runtime::Result<const runtime::TensorLayout> get_tensor_layout(
      std::string_view /*key*/) const override {
    return Error::NotImplemented;
  }
  runtime::Result<runtime::FreeableBuffer> get_data(
      std::string_view key) const override {
    auto it = data.find(std::string(key));
    if (it == data.end()) {
      return Error::NotFound;
    }
    return runtime::FreeableBuffer(
        it->second.data(),
        it->second.size() * sizeof(float),
        [](void* context, void*, size_t) {
          auto* entry = static_cast<std::pair<const CountingDataMap*,
                                              std::string>*>(context);
          entry->first->freed.insert(entry->second);
          delete entry;
        },
        new std::pair<const CountingDataMap*, std::string>(this,
                                                           std::string(key)));
  }
  Error load_data_into(std::string_view, void*, size_t) const override {
    return Error::NotImplemented;
  }
  runtime::Result<uint32_t> get_num_keys() const override {
    return static_cast<uint32_t>(data.size());
  }
  runtime::Result<const char*> get_key(uint32_t index) const override {
    auto it = data.begin();
    std::advance(it, index);
    return it->first.c_str();
  }
};

// The weights of a fully connected node are packed once, at init, into an
// operator that every batch size reuses (an LLM's prompt, then one token
// at a time): the named buffers holding them are freed at the end of init,
// and a named constant another node reads is kept.
TEST(XnnpackDynamic, PackedWeightsAreFreedAtInitAndServeEveryBatchSize) {
  // x [B <= 4, 6] -> fully_connected -> [B, 4] -> + offset [4] -> y.
  const std::vector<float> offset = random_values(4, -1, 1, 9);
  BlobBuilder b;
  const uint32_t x = b.input({kMaxBatch, 6}, 0);
  const uint32_t w = b.constant({4, 6}, kWeight);
  const uint32_t bias = b.constant({4}, kBias);
  const uint32_t c = b.constant({4}, offset);
  b.values()[w].named_key = "weight";
  b.values()[bias].named_key = "bias";
  b.values()[c].named_key = "offset";
  const uint32_t h = b.tensor({kMaxBatch, 4});
  const uint32_t y = b.output({kMaxBatch, 4}, 1);
  b.node(NodeKind::XNNFullyConnected,
         {x, w, bias},
         h,
         fully_connected_params(false));
  b.node(NodeKind::XNNAdd, {h, c}, y);
  CountingDataMap map;
  map.data = {{"weight", kWeight}, {"bias", kBias}, {"offset", offset}};
  DelegateRunner runner;
  ASSERT_EQ(runner.init(b.build(), {}, &map), Error::Ok);
  EXPECT_EQ(map.freed, (std::set<std::string>{"weight", "bias"}));
  for (int32_t batch : {4, 1, 3, 1}) {
    SCOPED_TRACE(batch);
    const std::vector<float> in = random_values(batch * 6, -2, 2, batch);
    std::vector<TensorPtr> out{output_tensor({kMaxBatch, 4}, kDynamic)};
    ASSERT_EQ(runner.run({input_tensor({batch, 6}, in)}, out), Error::Ok);
    std::vector<float> expected;
    for (int32_t n = 0; n < batch; ++n) {
      for (size_t o = 0; o < 4; ++o) {
        double sum = kBias[o] + offset[o];
        for (size_t k = 0; k < 6; ++k) {
          sum += double(in[n * 6 + k]) * kWeight[o * 6 + k];
        }
        expected.push_back(static_cast<float>(sum));
      }
    }
    EXPECT_EQ(sizes_of(out[0]), (std::vector<int32_t>{batch, 4}));
    expect_near(values_of(out[0]), expected, 1e-5f);
  }
}

TEST(XnnpackDynamic, SliceFromTheEndFollowsTheInput) {
  // y = x[-1:, :] of x [S <= 5, 3]: the last row whatever S is.
  BlobBuilder b;
  const uint32_t x = b.input({5, 3}, 0);
  const uint32_t y = b.output({1, 3}, 1);
  b.node(NodeKind::XNNStaticSlice,
         {x},
         y,
         slice_params({1, 0}, {1, 3}, {SliceMode::from_end, SliceMode::fixed}));
  DelegateRunner runner;
  ASSERT_EQ(runner.init(b.build()), Error::Ok);
  for (int32_t rows : {2, 5, 1}) {
    const std::vector<float> data = random_values(rows * 3, -2, 2, rows);
    std::vector<TensorPtr> out{output_tensor({1, 3})};
    ASSERT_EQ(runner.run({input_tensor({rows, 3}, data)}, out), Error::Ok);
    expect_near(values_of(out[0]),
                std::vector<float>(data.end() - 3, data.end()),
                0.0f);
  }
}

TEST(XnnpackDynamic, SizesOutsideTheBoundsAreRejectedBeforeRunning) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(DynamicGraph().b.build()), Error::Ok);
  std::vector<TensorPtr> out{output_tensor({2 * kMaxBatch}, kDynamic)};
  {
    LogCapture log;
    EXPECT_EQ(runner.run({input_tensor({5, 6}, random_values(30))}, out),
              Error::InvalidArgument);
    EXPECT_TRUE(
        log.contains({"XnnpackBackend input 0: size 5 at dim 0 is above its "
                      "upper bound 4"}));
  }
  {
    LogCapture log;
    EXPECT_EQ(runner.run({input_tensor({2, 5}, random_values(10))}, out),
              Error::InvalidArgument);
    EXPECT_TRUE(
        log.contains({"node 0 (fully_connected): input's last dim 5 does not "
                      "match the filter's 6 inputs"}));
  }
  {
    LogCapture log;
    EXPECT_EQ(runner.run({input_tensor({0, 6}, {})}, out),
              Error::InvalidArgument);
    EXPECT_TRUE(log.contains({"input 0: size 0 at dim 0"}));
  }
  // Still runs within the bounds.
  const std::vector<float> x = random_values(12);
  ASSERT_EQ(runner.run({input_tensor({2, 6}, x)}, out), Error::Ok);
  expect_near(values_of(out[0]), reference(x, 2), 1e-5f);
}

TEST(XnnpackDynamic, InputSizesThatDoNotFitANodeNameIt) {
  // a [A <= 4, 3] + b [B <= 4, 3]: A and B must agree (or one be 1).
  BlobBuilder g;
  const uint32_t a = g.input({4, 3}, 0);
  const uint32_t b = g.input({4, 3}, 1);
  const uint32_t y = g.output({4, 3}, 2);
  g.node(NodeKind::XNNAdd, {a, b}, y);
  DelegateRunner runner;
  ASSERT_EQ(runner.init(g.build()), Error::Ok);
  std::vector<TensorPtr> out{output_tensor({4, 3}, kDynamic)};
  {
    LogCapture log;
    EXPECT_EQ(runner.run({input_tensor({2, 3}, random_values(6)),
                          input_tensor({3, 3}, random_values(9))},
                         out),
              Error::InvalidArgument);
    EXPECT_TRUE(log.contains({"node 0 (add): inputs do not broadcast"}));
    EXPECT_TRUE(log.contains({"node 0 (add): the inputs' sizes do not fit"}));
  }
  const std::vector<float> va = random_values(9, -2, 2, 1);
  const std::vector<float> vb = random_values(9, -2, 2, 2);
  ASSERT_EQ(
      runner.run({input_tensor({3, 3}, va), input_tensor({3, 3}, vb)}, out),
      Error::Ok);
  EXPECT_EQ(sizes_of(out[0]), (std::vector<int32_t>{3, 3}));
  std::vector<float> want(9);
  for (size_t i = 0; i < 9; ++i) {
    want[i] = va[i] + vb[i];
  }
  expect_near(values_of(out[0]), want, 1e-6f);
}

struct MalformedCase {
  const char* name;
  std::function<void(DynamicGraph&)> corrupt;
  const char* log;
};

TEST(XnnpackDynamic, MalformedDynamicSpecsAreRejectedAtInit) {
  const MalformedCase cases[] = {
      {"dim_sources length",
       [](DynamicGraph& g) {
         g.b.nodes()[g.reshape_node].params =
             reshape_params({kMaxBatch, 2, 2}, {0, -1});
       },
       "node 1 (static_reshape): dim_sources has 2 entries, expected 3"},
      {"dim_sources input dim",
       [](DynamicGraph& g) {
         g.b.nodes()[g.reshape_node].params =
             reshape_params({kMaxBatch, 2, 2}, {0, 5, -1});
       },
       "dim_sources[1] = 5: the input has rank 2"},
      {"dim_sources two inferred",
       [](DynamicGraph& g) {
         g.b.nodes()[g.reshape_node].params =
             reshape_params({kMaxBatch, 2, 2}, {-2, -2, -1});
       },
       "node 1 (static_reshape): dims 0 and 1 are both inferred"},
      {"dim_sources unknown",
       [](DynamicGraph& g) {
         g.b.nodes()[g.reshape_node].params =
             reshape_params({kMaxBatch, 2, 2}, {0, -3, -1});
       },
       "dim_sources[1] = -3 is neither an input dim, -1 nor -2"},
      {"slice modes length",
       [](DynamicGraph& g) {
         g.b.nodes()[g.slice_node].params =
             slice_params({0, 1, 0}, {kMaxBatch, 1, 2}, {SliceMode::to_end});
       },
       "node 3 (static_slice): modes has 1 entries, expected 3"},
      {"slice mode unknown",
       [](DynamicGraph& g) {
         g.b.nodes()[g.slice_node].params = slice_params(
             {0, 1, 0},
             {kMaxBatch, 1, 2},
             {static_cast<SliceMode>(7), SliceMode::fixed, SliceMode::fixed});
       },
       "node 3 (static_slice): modes[0] = 7 is not a slice mode"},
      {"slice window past the input",
       [](DynamicGraph& g) {
         g.b.nodes()[g.slice_node].params = slice_params(
             {0, 3, 0},
             {kMaxBatch, 1, 2},
             {SliceMode::to_end, SliceMode::from_end, SliceMode::fixed});
       },
       "node 3 (static_slice): dim 1: offset 3 and size 1 do not fit the "
       "input's 2"},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    DynamicGraph g;
    c.corrupt(g);
    LogCapture log;
    DelegateRunner runner;
    EXPECT_EQ(runner.init(g.b.build()), Error::InvalidProgram);
    EXPECT_TRUE(log.contains({c.log}));
  }
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
