// A fully connected node with a per-channel int8 filter, as upstream's
// partitioner writes int8 linears: Debian's XNNPACK refuses the node kind
// with such a filter, so the backend defines it as a 1x1 convolution; the
// results must be what a per-channel fully connected computes.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/test/blob_builder.h>
#include <executorch/backends/xnnpack/test/delegate_runner.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {

using fb_xnnpack::XNNDatatype;

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(XnnpackQc8FullyConnected, MatchesPerChannelRequantization) {
  const uint32_t k = 7, n = 5, rows = 6;
  const float in_scale = 0.05f, out_scale = 0.04f;
  const int32_t in_zero = 3, out_zero = -10;
  // The output clamp [0, inf) is a ReLU fused into the node.
  const float clamp_min = 0.0f;
  std::vector<int8_t> w(n * k);
  std::vector<float> w_scales(n);
  std::vector<int32_t> bias(n);
  std::vector<float> bias_scales(n);
  std::vector<float> x(rows * k);
  std::vector<int32_t> xq(rows * k);
  for (uint32_t i = 0; i < n * k; ++i) {
    w[i] = static_cast<int8_t>((i * 37 + 11) % 255 - 127);
  }
  for (uint32_t o = 0; o < n; ++o) {
    w_scales[o] = 0.002f * (o + 1);
    bias[o] = static_cast<int32_t>(o * 301) - 600;
    bias_scales[o] = in_scale * w_scales[o];
  }
  // Inputs on the quantization grid, so converting them is exact.
  for (uint32_t i = 0; i < rows * k; ++i) {
    xq[i] = static_cast<int32_t>((i * 53 + 7) % 200) - 100;
    x[i] = (xq[i] - in_zero) * in_scale;
  }

  BlobBuilder b;
  const uint32_t input = b.input({2, 3, k}, 0);
  const uint32_t x_q = b.tensor({2, 3, k});
  b.values()[x_q].datatype = XNNDatatype::xnn_datatype_qint8;
  b.values()[x_q].per_tensor = {{in_scale, in_zero}};
  const uint32_t filter = b.tensor({n, k});
  ValueDesc& f = b.values()[filter];
  f.datatype = XNNDatatype::xnn_datatype_qcint8;
  f.is_constant = true;
  f.bytes = bytes_of(w);
  f.channel_scales = w_scales;
  const uint32_t bias_id = b.tensor({n});
  ValueDesc& bv = b.values()[bias_id];
  bv.datatype = XNNDatatype::xnn_datatype_qcint32;
  bv.is_constant = true;
  bv.bytes = bytes_of(bias);
  bv.channel_scales = bias_scales;
  const uint32_t y_q = b.tensor({2, 3, n});
  b.values()[y_q].datatype = XNNDatatype::xnn_datatype_qint8;
  b.values()[y_q].per_tensor = {{out_scale, out_zero}};
  const uint32_t output = b.output({2, 3, n}, 1);
  b.node(NodeKind::XNNConvert, {input}, x_q);
  b.node(NodeKind::XNNFullyConnected,
         {x_q, filter, bias_id},
         y_q,
         fully_connected_params(false),
         std::make_pair(clamp_min, std::numeric_limits<float>::infinity()));
  b.node(NodeKind::XNNConvert, {y_q}, output);

  DelegateRunner runner;
  ASSERT_EQ(runner.init(b.build()), runtime::Error::Ok);
  TensorPtr in = input_tensor({2, 3, static_cast<int32_t>(k)}, x);
  TensorPtr out = output_tensor({2, 3, static_cast<int32_t>(n)});
  ASSERT_EQ(runner.run({in}, {out}), runtime::Error::Ok);
  const std::vector<float> got = values_of(out);

  // XNNPACK's fp32 requantization: the int32 sum times input scale * filter
  // scale / output scale, rounded to nearest even, plus the output zero
  // point, clamped.
  const int32_t q_min = out_zero;  // the clamp's 0.0 quantized
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t o = 0; o < n; ++o) {
      int32_t acc = bias[o];
      for (uint32_t i = 0; i < k; ++i) {
        acc += (xq[r * k + i] - in_zero) * w[o * k + i];
      }
      const float scaled = acc * (in_scale * w_scales[o] / out_scale);
      int32_t q = static_cast<int32_t>(std::nearbyint(scaled)) + out_zero;
      q = std::min(std::max(q, q_min), int32_t{127});
      const float want = (q - out_zero) * out_scale;
      EXPECT_NEAR(got[r * n + o], want, out_scale * 1.01f)
          << "row " << r << " channel " << o;
    }
  }
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
