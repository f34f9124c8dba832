#pragma once

// Test helpers shared by the XNNPACK backend tests: random data, element
// comparison, and one-node graphs run through the backend.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
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

// NHWC grouped convolution with an OHWI filter of group_input_channels.
inline std::vector<float> conv_reference(const std::vector<float>& x,
                                         const Dims& xd,
                                         const std::vector<float>& w,
                                         uint32_t k,
                                         const std::vector<float>& bias,
                                         uint32_t stride,
                                         uint32_t pad,
                                         uint32_t dilation,
                                         uint32_t groups,
                                         const Dims& od) {
  const uint32_t oc_total = od[3];
  const uint32_t gic = xd[3] / groups;
  const uint32_t goc = oc_total / groups;
  std::vector<float> out(numel(od));
  for (uint32_t n = 0; n < od[0]; ++n) {
    for (uint32_t oh = 0; oh < od[1]; ++oh) {
      for (uint32_t ow = 0; ow < od[2]; ++ow) {
        for (uint32_t oc = 0; oc < oc_total; ++oc) {
          const uint32_t g = oc / goc;
          double sum = bias.empty() ? 0.0 : bias[oc];
          for (uint32_t kh = 0; kh < k; ++kh) {
            for (uint32_t kw = 0; kw < k; ++kw) {
              const int64_t ih = int64_t(oh) * stride + kh * dilation - pad;
              const int64_t iw = int64_t(ow) * stride + kw * dilation - pad;
              if (ih < 0 || iw < 0 || ih >= xd[1] || iw >= xd[2]) {
                continue;
              }
              for (uint32_t ic = 0; ic < gic; ++ic) {
                sum += double(x[((n * xd[1] + ih) * xd[2] + iw) * xd[3] +
                                g * gic + ic]) *
                       w[((oc * k + kh) * k + kw) * gic + ic];
              }
            }
          }
          out[((n * od[1] + oh) * od[2] + ow) * oc_total + oc] =
              static_cast<float>(sum);
        }
      }
    }
  }
  return out;
}

// One node whose non-constant inputs are args 0.., its constants following
// them in the node's input list, and its output the last arg.
struct SingleNode {
  NodeKind kind;
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
    std::vector<TensorPtr> in;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in.push_back(input_tensor(sizes_of(inputs[i]), data[i]));
    }
    std::vector<TensorPtr> out{output_tensor(sizes_of(output))};
    const runtime::Error error = runner.run(in, out);
    EXPECT_EQ(error, runtime::Error::Ok);
    return values_of(out[0]);
  }
};

// Runs `blob` (one input arg, one output arg, fp32) on `x`, with
// EXECUTORCH_XNNPACK_HOST_KERNELS set to `host_kernels` while the delegate
// initializes ("0" keeps every node on XNNPACK): the output, empty after a
// failure, which is reported.
inline std::vector<float> run_with_host_kernels(
    const std::vector<uint8_t>& blob,
    const char* host_kernels,
    const Dims& in_dims,
    const std::vector<float>& x,
    const Dims& out_dims) {
  setenv("EXECUTORCH_XNNPACK_HOST_KERNELS", host_kernels, 1);
  DelegateRunner runner;
  const runtime::Error init = runner.init(blob);
  unsetenv("EXECUTORCH_XNNPACK_HOST_KERNELS");
  EXPECT_EQ(init, runtime::Error::Ok);
  if (init != runtime::Error::Ok) {
    return {};
  }
  TensorPtr out = output_tensor(sizes_of(out_dims));
  EXPECT_EQ(runner.run({input_tensor(sizes_of(in_dims), x)}, {out}),
            runtime::Error::Ok);
  return values_of(out);
}

// Floats a kernel's output buffer has past the output, set to this, which
// the kernel must leave untouched.
inline constexpr size_t kGuardFloats = 32;
inline constexpr float kGuardValue = 99.0f;

// An output buffer for `n` floats, followed by the guard.
inline std::vector<float> guarded_output(size_t n) {
  return std::vector<float>(n + kGuardFloats, kGuardValue);
}

// Expects got[i] within bound[i] of want[i] for i < want.size() (reporting
// the first 5 misses, each with `context`), and, when `guarded`, the guard
// after them untouched.
inline void expect_within_bounds(const std::vector<float>& got,
                                 const std::vector<double>& want,
                                 const std::vector<double>& bound,
                                 const std::string& context,
                                 bool guarded = true) {
  ASSERT_EQ(got.size(), want.size() + (guarded ? kGuardFloats : 0)) << context;
  size_t bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= bound[i])) {
      ADD_FAILURE() << context << ": output " << i << " is " << got[i]
                    << ", expected " << want[i] << " +- " << bound[i];
      ++bad;
    }
  }
  if (guarded) {
    EXPECT_EQ(std::count(got.begin() + want.size(), got.end(), kGuardValue),
              kGuardFloats)
        << context;
  }
}

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
