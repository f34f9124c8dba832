// Each node kind against a naive reference computed here, through
// XnnpackBackend's init/execute. Tolerances are relative (see expect_near):
// 1e-5 for exact arithmetic, looser where XNNPACK uses approximations
// (sigmoid, elu, softmax) or long sums (convolutions).

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/test/test_util.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {



constexpr float kInf = std::numeric_limits<float>::infinity();

struct UnaryCase {
  const char* name;
  NodeKind kind;
  std::function<float(float)> reference;
  Params params = {};
  std::optional<std::pair<float, float>> clamp = std::nullopt;
  float lo = -3.0f;
  float hi = 3.0f;
  float tolerance = 1e-5f;
};

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

TEST(XnnpackOps, UnaryKinds) {
  const UnaryCase cases[] = {
      {"relu",
       NodeKind::XNNClamp,
       [](float x) { return std::max(x, 0.0f); },
       {},
       std::make_pair(0.0f, kInf)},
      {"hardtanh",
       NodeKind::XNNClamp,
       [](float x) { return std::min(std::max(x, -1.0f), 1.0f); },
       {},
       std::make_pair(-1.0f, 1.0f)},
      {"sigmoid", NodeKind::XNNSigmoid, sigmoid, {}, std::nullopt, -8, 8, 1e-5f},
      {"tanh", NodeKind::XNNTanh, [](float x) { return std::tanh(x); }},
      {"gelu",
       NodeKind::XNNGelu,
       [](float x) {
         return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
       },
      },
      {"exp", NodeKind::XNNExp, [](float x) { return std::exp(x); }},
      {"log",
       NodeKind::XNNLog,
       [](float x) { return std::log(x); },
       {},
       std::nullopt,
       0.1f,
       9.0f},
      {"sin", NodeKind::XNNSin, [](float x) { return std::sin(x); }},
      {"cos", NodeKind::XNNCos, [](float x) { return std::cos(x); }},
      {"rsqrt",
       NodeKind::XNNReciprocalSquareRoot,
       [](float x) { return 1.0f / std::sqrt(x); },
       {},
       std::nullopt,
       0.1f,
       9.0f},
      {"hardswish",
       NodeKind::XNNHardswish,
       [](float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6; },
       {},
       std::nullopt,
       -5,
       5},
      {"leaky_relu",
       NodeKind::XNNLeakyReLU,
       [](float x) { return x > 0 ? x : 0.125f * x; },
       leaky_relu_params(0.125f)},
      {"elu",
       NodeKind::XNNELU,
       [](float x) { return x > 0 ? x : 0.5f * (std::exp(x) - 1.0f); },
       elu_params(0.5f),
       std::nullopt,
       -3,
       3,
       1e-5f},
      {"abs", NodeKind::XNNAbs, [](float x) { return std::fabs(x); }},
      {"negate", NodeKind::XNNNegate, [](float x) { return -x; }},
      {"square_root",
       NodeKind::XNNSquareRoot,
       [](float x) { return std::sqrt(x); },
       {},
       std::nullopt,
       0.0f,
       9.0f},
      {"square", NodeKind::XNNSquare, [](float x) { return x * x; }},
      {"floor", NodeKind::XNNFloor, [](float x) { return std::floor(x); }},
      {"ceiling", NodeKind::XNNCeiling, [](float x) { return std::ceil(x); }},
  };
  const Dims dims{2, 3, 5, 7};
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<float> x = random_values(numel(dims), c.lo, c.hi);
    std::vector<float> want(x.size());
    std::transform(x.begin(), x.end(), want.begin(), c.reference);
    SingleNode node{c.kind, {dims}, {}, dims, c.params, c.clamp};
    expect_near(node.run({x}), want, c.tolerance);
  }
}

// Broadcasting binary ops with an optional fused clamp.
TEST(XnnpackOps, BinaryKindsBroadcast) {
  struct Case {
    const char* name;
    NodeKind kind;
    std::function<float(float, float)> op;
  };
  const Case cases[] = {
      {"add", NodeKind::XNNAdd, std::plus<float>()},
      {"subtract", NodeKind::XNNSubtract, std::minus<float>()},
      {"multiply", NodeKind::XNNMultiply, std::multiplies<float>()},
      {"divide", NodeKind::XNNDiv, std::divides<float>()},
      {"maximum",
       NodeKind::XNNMaximum,
       [](float a, float b) { return std::max(a, b); }},
      {"minimum",
       NodeKind::XNNMinimum,
       [](float a, float b) { return std::min(a, b); }},
  };
  const Dims a_dims{2, 3, 4};
  const Dims b_dims{3, 1};
  const std::vector<float> a = random_values(numel(a_dims), -2, 2, 1);
  // Kept away from zero for divide.
  std::vector<float> b = random_values(numel(b_dims), 0.5f, 2.0f, 2);
  b[1] = -b[1];
  for (const Case& c : cases) {
    for (bool clamped : {false, true}) {
      SCOPED_TRACE(std::string(c.name) + (clamped ? " clamped" : ""));
      std::optional<std::pair<float, float>> clamp;
      if (clamped && c.kind != NodeKind::XNNMaximum &&
          c.kind != NodeKind::XNNMinimum) {
        clamp = std::make_pair(-0.5f, 0.75f);
      } else if (clamped) {
        continue;
      }
      std::vector<float> want;
      for (size_t i = 0; i < 2; ++i) {
        for (size_t j = 0; j < 3; ++j) {
          for (size_t k = 0; k < 4; ++k) {
            float v = c.op(a[(i * 3 + j) * 4 + k], b[j]);
            if (clamp) {
              v = std::min(std::max(v, clamp->first), clamp->second);
            }
            want.push_back(v);
          }
        }
      }
      SingleNode node{c.kind, {a_dims, b_dims}, {}, a_dims, {}, clamp};
      expect_near(node.run({a, b}), want, 1e-5f);
    }
  }
}

TEST(XnnpackOps, Conv2dGroupedStridedDilatedWithRelu6) {
  const Dims xd{2, 9, 8, 4};
  const uint32_t groups = 2, gic = 2, goc = 3, k = 3, stride = 2, pad = 1,
                 dilation = 2;
  const Dims wd{groups * goc, k, k, gic};
  const Dims od{2, 4, 3, groups * goc};
  const std::vector<float> x = random_values(numel(xd), -1, 1, 3);
  const std::vector<float> w = random_values(numel(wd), -1, 1, 4);
  const std::vector<float> b = random_values(groups * goc, -1, 1, 5);
  std::vector<float> want =
      conv_reference(x, xd, w, k, b, stride, pad, dilation, groups, od);
  for (float& v : want) {
    v = std::min(std::max(v, 0.0f), 6.0f);
  }
  SingleNode node{NodeKind::XNNConv2d,
                  {xd},
                  {{wd, w}, {{groups * goc}, b}},
                  od,
                  conv_params(k, stride, pad, dilation, groups, gic, goc),
                  std::make_pair(0.0f, 6.0f)};
  expect_near(node.run({x}), want, 1e-4f);
}

TEST(XnnpackOps, Conv2dWithoutBias) {
  const Dims xd{1, 5, 5, 3};
  const Dims wd{4, 1, 1, 3};
  const Dims od{1, 5, 5, 4};
  const std::vector<float> x = random_values(numel(xd), -1, 1, 6);
  const std::vector<float> w = random_values(numel(wd), -1, 1, 7);
  SingleNode node{
      NodeKind::XNNConv2d, {xd}, {{wd, w}}, od, conv_params(1, 1, 0, 1, 1, 3, 4)};
  expect_near(
      node.run({x}), conv_reference(x, xd, w, 1, {}, 1, 0, 1, 1, od), 1e-4f);
}

TEST(XnnpackOps, DepthwiseConv2dWithMultiplier) {
  const uint32_t channels = 3, multiplier = 2, k = 3;
  const Dims xd{1, 6, 6, channels};
  const Dims od{1, 6, 6, channels * multiplier};
  // Depthwise filter [1, KH, KW, C * M]; the reference takes it as a grouped
  // OHWI filter with one input channel per group.
  const std::vector<float> dw =
      random_values(k * k * channels * multiplier, -1, 1, 8);
  std::vector<float> grouped(dw.size());
  for (uint32_t oc = 0; oc < channels * multiplier; ++oc) {
    for (uint32_t i = 0; i < k * k; ++i) {
      grouped[oc * k * k + i] = dw[i * channels * multiplier + oc];
    }
  }
  const std::vector<float> b = random_values(channels * multiplier, -1, 1, 9);
  const std::vector<float> x = random_values(numel(xd), -1, 1, 10);
  SingleNode node{
      NodeKind::XNNDepthwiseConv2d,
      {xd},
      {{{1, k, k, channels * multiplier}, dw}, {{channels * multiplier}, b}},
      od,
      conv_params(k, 1, 1, 1, channels, 1, multiplier)};
  expect_near(node.run({x}),
              conv_reference(x, xd, grouped, k, b, 1, 1, 1, channels, od),
              1e-4f);
}

TEST(XnnpackOps, Deconv2dStridedWithAdjustment) {
  const uint32_t k = 3, stride = 2, pad = 1, adj = 1, ic = 3, oc = 2;
  const Dims xd{1, 4, 5, ic};
  // stride * (H - 1) + adj + K - 2 * pad
  const Dims od{1, 8, 10, oc};
  const Dims wd{oc, k, k, ic};
  const std::vector<float> x = random_values(numel(xd), -1, 1, 11);
  const std::vector<float> w = random_values(numel(wd), -1, 1, 12);
  const std::vector<float> b = random_values(oc, -1, 1, 13);
  std::vector<double> acc(numel(od));
  for (uint32_t h = 0; h < od[1]; ++h) {
    for (uint32_t wi = 0; wi < od[2]; ++wi) {
      for (uint32_t o = 0; o < oc; ++o) {
        acc[(h * od[2] + wi) * oc + o] = b[o];
      }
    }
  }
  for (uint32_t ih = 0; ih < xd[1]; ++ih) {
    for (uint32_t iw = 0; iw < xd[2]; ++iw) {
      for (uint32_t kh = 0; kh < k; ++kh) {
        for (uint32_t kw = 0; kw < k; ++kw) {
          const int64_t oh = int64_t(ih) * stride + kh - pad;
          const int64_t ow = int64_t(iw) * stride + kw - pad;
          if (oh < 0 || ow < 0 || oh >= od[1] || ow >= od[2]) {
            continue;
          }
          for (uint32_t o = 0; o < oc; ++o) {
            for (uint32_t i = 0; i < ic; ++i) {
              acc[(oh * od[2] + ow) * oc + o] +=
                  double(x[(ih * xd[2] + iw) * ic + i]) *
                  w[((o * k + kh) * k + kw) * ic + i];
            }
          }
        }
      }
    }
  }
  SingleNode node{NodeKind::XNNConvTranspose2d,
                  {xd},
                  {{wd, w}, {{oc}, b}},
                  od,
                  conv_params(k, stride, pad, 1, 1, ic, oc, adj)};
  expect_near(node.run({x}), std::vector<float>(acc.begin(), acc.end()), 1e-4f);
}

TEST(XnnpackOps, FullyConnectedBothWeightLayouts) {
  const uint32_t rows = 6, in_features = 5, out_features = 4;
  const std::vector<float> x = random_values(2 * 3 * in_features, -1, 1, 14);
  const std::vector<float> w =
      random_values(out_features * in_features, -1, 1, 15);
  const std::vector<float> b = random_values(out_features, -1, 1, 16);
  std::vector<float> want(rows * out_features);
  std::vector<float> w_t(w.size());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t o = 0; o < out_features; ++o) {
      double sum = b[o];
      for (uint32_t i = 0; i < in_features; ++i) {
        sum += double(x[r * in_features + i]) * w[o * in_features + i];
        w_t[i * out_features + o] = w[o * in_features + i];
      }
      want[r * out_features + o] = static_cast<float>(sum);
    }
  }
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "plain");
    const Dims wd = transposed ? Dims{in_features, out_features}
                               : Dims{out_features, in_features};
    SingleNode node{NodeKind::XNNFullyConnected,
                    {{2, 3, in_features}},
                    {{wd, transposed ? w_t : w}, {{out_features}, b}},
                    {2, 3, out_features},
                    fully_connected_params(transposed)};
    expect_near(node.run({x}), want, 1e-5f);
  }
}

TEST(XnnpackOps, BatchMatrixMultiply) {
  const uint32_t batch = 3, m = 4, k = 5, n = 2;
  const std::vector<float> a = random_values(batch * m * k, -1, 1, 17);
  const std::vector<float> b = random_values(batch * k * n, -1, 1, 18);
  std::vector<float> want(batch * m * n);
  for (uint32_t p = 0; p < batch; ++p) {
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        double sum = 0;
        for (uint32_t q = 0; q < k; ++q) {
          sum += double(a[(p * m + i) * k + q]) * b[(p * k + q) * n + j];
        }
        want[(p * m + i) * n + j] = static_cast<float>(sum);
      }
    }
  }
  SingleNode node{NodeKind::XNNBatchMatrixMultiply,
                  {{batch, m, k}, {batch, k, n}},
                  {},
                  {batch, m, n}};
  expect_near(node.run({a, b}), want, 1e-5f);
}

TEST(XnnpackOps, Prelu) {
  const Dims dims{1, 3, 4, 5};
  const std::vector<float> x = random_values(numel(dims), -2, 2, 19);
  const std::vector<float> slope = random_values(5, 0, 1, 20);
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    want[i] = x[i] > 0 ? x[i] : x[i] * slope[i % 5];
  }
  SingleNode node{NodeKind::XNNPReLU, {dims}, {{{5}, slope}}, dims};
  expect_near(node.run({x}), want, 1e-5f);
}

TEST(XnnpackOps, SoftmaxOverLastDim) {
  const Dims dims{3, 7};
  const std::vector<float> x = random_values(numel(dims), -4, 4, 21);
  std::vector<float> want(x.size());
  for (size_t r = 0; r < 3; ++r) {
    double sum = 0;
    for (size_t c = 0; c < 7; ++c) {
      sum += std::exp(double(x[r * 7 + c]));
    }
    for (size_t c = 0; c < 7; ++c) {
      want[r * 7 + c] =
          static_cast<float>(std::exp(double(x[r * 7 + c])) / sum);
    }
  }
  SingleNode node{NodeKind::XNNSoftmax, {dims}, {}, dims};
  expect_near(node.run({x}), want, 1e-5f);
}

// NHWC pooling; the average excludes padding, as XNNPACK computes it.
std::vector<float> pool_reference(const std::vector<float>& x,
                                  const Dims& xd,
                                  const Dims& od,
                                  uint32_t k,
                                  uint32_t stride,
                                  uint32_t pad,
                                  bool max) {
  std::vector<float> out(numel(od));
  for (uint32_t oh = 0; oh < od[1]; ++oh) {
    for (uint32_t ow = 0; ow < od[2]; ++ow) {
      for (uint32_t c = 0; c < od[3]; ++c) {
        float best = -kInf;
        double sum = 0;
        size_t count = 0;
        for (uint32_t kh = 0; kh < k; ++kh) {
          for (uint32_t kw = 0; kw < k; ++kw) {
            const int64_t ih = int64_t(oh) * stride + kh - pad;
            const int64_t iw = int64_t(ow) * stride + kw - pad;
            if (ih < 0 || iw < 0 || ih >= xd[1] || iw >= xd[2]) {
              continue;
            }
            const float v = x[(ih * xd[2] + iw) * xd[3] + c];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        }
        out[(oh * od[2] + ow) * od[3] + c] =
            max ? best : static_cast<float>(sum / count);
      }
    }
  }
  return out;
}

TEST(XnnpackOps, MaxAndAveragePooling) {
  const Dims xd{1, 7, 6, 3};
  const Dims od{1, 4, 3, 3};
  const std::vector<float> x = random_values(numel(xd), -2, 2, 22);
  for (bool max : {true, false}) {
    SCOPED_TRACE(max ? "max" : "avg");
    SingleNode node{max ? NodeKind::XNNMaxPooling2d : NodeKind::XNNAvgPooling2d,
                    {xd},
                    {},
                    od,
                    pool_params(3, 2, 1)};
    expect_near(node.run({x}), pool_reference(x, xd, od, 3, 2, 1, max), 1e-5f);
  }
}

TEST(XnnpackOps, GlobalAveragePooling) {
  const Dims xd{2, 3, 4, 5};
  const std::vector<float> x = random_values(numel(xd), -2, 2, 23);
  std::vector<float> want(2 * 5, 0.0f);
  for (size_t n = 0; n < 2; ++n) {
    for (size_t i = 0; i < 12; ++i) {
      for (size_t c = 0; c < 5; ++c) {
        want[n * 5 + c] += x[(n * 12 + i) * 5 + c] / 12.0f;
      }
    }
  }
  SingleNode node{
      NodeKind::XNNGlobalAvgPooling2d, {xd}, {}, {2, 1, 1, 5}, keep_dims_params()};
  expect_near(node.run({x}), want, 1e-5f);
}

TEST(XnnpackOps, ConcatenateMiddleAxis) {
  const std::vector<float> a = random_values(2 * 1 * 3, -2, 2, 24);
  const std::vector<float> b = random_values(2 * 2 * 3, -2, 2, 25);
  std::vector<float> want;
  for (size_t n = 0; n < 2; ++n) {
    want.insert(want.end(), a.begin() + n * 3, a.begin() + n * 3 + 3);
    want.insert(want.end(), b.begin() + n * 6, b.begin() + n * 6 + 6);
  }
  SingleNode node{NodeKind::XNNConcatenate2,
                  {{2, 1, 3}, {2, 2, 3}},
                  {},
                  {2, 3, 3},
                  concatenate_params(1)};
  expect_near(node.run({a, b}), want, 0.0f);
}

TEST(XnnpackOps, TransposeNchwToNhwc) {
  const Dims xd{2, 3, 4, 5};
  const std::vector<float> x = random_values(numel(xd), -2, 2, 26);
  std::vector<float> want;
  for (size_t n = 0; n < 2; ++n) {
    for (size_t h = 0; h < 4; ++h) {
      for (size_t w = 0; w < 5; ++w) {
        for (size_t c = 0; c < 3; ++c) {
          want.push_back(x[((n * 3 + c) * 4 + h) * 5 + w]);
        }
      }
    }
  }
  SingleNode node{NodeKind::XNNStaticTranspose,
                  {xd},
                  {},
                  {2, 4, 5, 3},
                  transpose_params({0, 2, 3, 1})};
  expect_near(node.run({x}), want, 0.0f);
}

TEST(XnnpackOps, ReshapeKeepsData) {
  const std::vector<float> x = random_values(24, -2, 2, 27);
  SingleNode node{NodeKind::XNNStaticReshape,
                  {{2, 3, 4}},
                  {},
                  {6, 4},
                  reshape_params({6, 4})};
  expect_near(node.run({x}), x, 0.0f);
}

TEST(XnnpackOps, Slice) {
  const Dims xd{3, 4, 5};
  const std::vector<float> x = random_values(numel(xd), -2, 2, 28);
  std::vector<float> want;
  for (size_t i = 1; i < 3; ++i) {
    for (size_t j = 0; j < 4; ++j) {
      for (size_t k = 2; k < 5; ++k) {
        want.push_back(x[(i * 4 + j) * 5 + k]);
      }
    }
  }
  SingleNode node{NodeKind::XNNStaticSlice,
                  {xd},
                  {},
                  {2, 4, 3},
                  slice_params({1, 0, 2}, {2, 4, 3})};
  expect_near(node.run({x}), want, 0.0f);
}

TEST(XnnpackOps, ConstantPad) {
  const std::vector<float> x = random_values(6, -2, 2, 29);
  // [2, 3] padded by (1, 0) rows and (2, 1) columns with 0.5.
  std::vector<float> want(3 * 6, 0.5f);
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 3; ++j) {
      want[(i + 1) * 6 + j + 2] = x[i * 3 + j];
    }
  }
  SingleNode node{NodeKind::XNNStaticConstantPad,
                  {{2, 3}},
                  {},
                  {3, 6},
                  pad_params({1, 2}, {0, 1}, 0.5f)};
  expect_near(node.run({x}), want, 0.0f);
}

// Half-pixel centers (PyTorch's align_corners=False) and align_corners.
TEST(XnnpackOps, ResizeBilinear) {
  const Dims xd{1, 3, 4, 2};
  const uint32_t oh = 6, ow = 7;
  const std::vector<float> x = random_values(numel(xd), -2, 2, 30);
  for (bool align : {false, true}) {
    SCOPED_TRACE(align ? "align_corners" : "half_pixel");
    auto source = [&](uint32_t o, uint32_t in, uint32_t out) {
      if (align) {
        return out > 1 ? float(o) * (in - 1) / (out - 1) : 0.0f;
      }
      return std::max(0.0f, (o + 0.5f) * in / out - 0.5f);
    };
    std::vector<float> want;
    for (uint32_t h = 0; h < oh; ++h) {
      const float sh = source(h, xd[1], oh);
      const uint32_t h0 = static_cast<uint32_t>(sh);
      const uint32_t h1 = std::min(h0 + 1, xd[1] - 1);
      const float fh = sh - h0;
      for (uint32_t w = 0; w < ow; ++w) {
        const float sw = source(w, xd[2], ow);
        const uint32_t w0 = static_cast<uint32_t>(sw);
        const uint32_t w1 = std::min(w0 + 1, xd[2] - 1);
        const float fw = sw - w0;
        for (uint32_t c = 0; c < 2; ++c) {
          auto at = [&](uint32_t i, uint32_t j) {
            return x[(i * xd[2] + j) * 2 + c];
          };
          const float top = at(h0, w0) + (at(h0, w1) - at(h0, w0)) * fw;
          const float bottom = at(h1, w0) + (at(h1, w1) - at(h1, w0)) * fw;
          want.push_back(top + (bottom - top) * fh);
        }
      }
    }
    SingleNode node{NodeKind::XNNStaticResizeBilinear2D,
                    {xd},
                    {},
                    {1, oh, ow, 2},
                    resize_params(oh, ow, align)};
    expect_near(node.run({x}), want, 1e-5f);
  }
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
