#pragma once

// Test helpers shared by the XNNPACK backend tests: random data, element
// comparison, and one-node graphs run through the backend.

#include <cmath>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/test/blob_builder.h>
#include <executorch/backends/xnnpack/test/delegate_runner.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

inline size_t numel(const Dims& dims) {
  size_t n = 1;
  for (uint32_t d : dims) {
    n *= d;
  }
  return n;
}

inline std::vector<int32_t> sizes_of(const Dims& dims) {
  return std::vector<int32_t>(dims.begin(), dims.end());
}

inline std::vector<float> random_values(size_t n,
                                        float lo = -2.0f,
                                        float hi = 2.0f,
                                        uint32_t seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) {
    x = dist(gen);
  }
  return v;
}

inline void expect_near(const std::vector<float>& got,
                        const std::vector<float>& want,
                        float tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tolerance * (1.0f + std::fabs(want[i])))
        << "at element " << i;
  }
}

// One node whose non-constant inputs are args 0.., its constants following
// them in the node's input list, and its output the last arg.
struct SingleNode {
  xnnpack_graph::NodeKind kind;
  std::vector<Dims> inputs;
  std::vector<std::pair<Dims, std::vector<float>>> constants;
  Dims output;
  Params params;
  std::optional<std::pair<float, float>> clamp;

  std::vector<uint8_t> blob() const {
    BlobBuilder b;
    std::vector<uint32_t> ids;
    for (size_t i = 0; i < inputs.size(); ++i) {
      ids.push_back(b.input(inputs[i], static_cast<uint32_t>(i)));
    }
    for (const auto& c : constants) {
      ids.push_back(b.constant(c.first, c.second));
    }
    const uint32_t out = b.output(output, static_cast<uint32_t>(inputs.size()));
    b.node(kind, ids, out, params, clamp);
    return b.build();
  }

  // The output for `data` (one vector per non-constant input); empty after
  // a failure, which is reported.
  std::vector<float> run(const std::vector<std::vector<float>>& data) const {
    DelegateRunner runner;
    const runtime::Error init = runner.init(blob());
    EXPECT_EQ(init, runtime::Error::Ok);
    if (init != runtime::Error::Ok) {
      return {};
    }
    std::vector<HostTensor> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in.push_back({sizes_of(inputs[i]), data[i]});
    }
    std::vector<HostTensor> out{{sizes_of(output), {}}};
    const runtime::Error error = runner.run(in, &out);
    EXPECT_EQ(error, runtime::Error::Ok);
    return out[0].data;
  }
};

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
