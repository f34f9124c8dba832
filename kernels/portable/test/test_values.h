#pragma once

// Inputs and checks the kernel tests share.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

namespace torch {
namespace executor {
namespace testing {

// i * scale + offset for i in [0, n).
inline std::vector<float> iota(size_t n, float scale = 1, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<float>(i) * scale + offset;
  }
  return v;
}

inline std::vector<float> floats(std::initializer_list<float> v) {
  return std::vector<float>(v);
}

// Element-wise within 1e-4 (the reference values are printed by PyTorch
// with that many digits).
inline void expect_near(const std::vector<float>& actual,
                        const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], 1e-4) << "at " << i;
  }
}

// Exporters keep channels-last dim orders (upstream ExecuTorch's does);
// kernels must give the same values for the same logical tensors.
inline const std::vector<uint8_t> kChannelsLast = {0, 2, 3, 1};

// Values of a contiguous [n, c, h, w] tensor in channels-last memory order.
inline std::vector<float> to_channels_last(const std::vector<float>& v,
                                           int n,
                                           int c,
                                           int hw) {
  std::vector<float> result(v.size());
  for (int b = 0; b < n; ++b) {
    for (int ch = 0; ch < c; ++ch) {
      for (int i = 0; i < hw; ++i) {
        result[(b * hw + i) * c + ch] = v[(b * c + ch) * hw + i];
      }
    }
  }
  return result;
}

// A 5x5 plane the pooling tests slide windows over.
inline const std::vector<float> kPoolInput = {1, 5, 2, 0, 3, 4, -1, 7, 2,
                                              2, 0, 3, 3, 9, 1, 2, 2, 8,
                                              1, 0, 5, 1, 0, 4, 6};

} // namespace testing
} // namespace executor
} // namespace torch
