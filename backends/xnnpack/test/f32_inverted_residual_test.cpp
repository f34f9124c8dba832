// The fused fp32 inverted residual block (runtime/f32_inverted_residual.h)
// against a direct convolution chain in double precision: every 1x1 and
// depthwise loop this CPU runs (portable, AVX2, AVX-512), on one thread and
// several (bands of rows, whose edge rows are expanded twice), strides 1
// and 2, padding 0, 1 and 2, channel counts that fill no vector, sizes whose
// rows make partial chunks and wrap the ring, two images, clamps, the
// residual, no biases; and the four nodes run by the backend as one fused
// host step and, with EXECUTORCH_XNNPACK_HOST_KERNELS=0, node by node on
// XNNPACK.
//
// Tolerance: each output is a chain of three dot products (in_channels,
// 9 and expanded-channel terms, plus the biases) accumulated in fp32 in
// another order than the reference's. Each dot product of n terms is off
// by at most n roundings of its partial sums, each at most 2^-24 of the sum
// of the terms' magnitudes, and a stage passes the error of its inputs on
// scaled by its weights' magnitudes (the clamps do not widen it). So with
// M the magnitude of the whole chain (|bias| + sum |w| M(input) at each
// stage, |x| for an input), |got - exact| <= (in_c + mid_c + 13) * 2^-24 *
// M, doubled for room.

#include <gtest/gtest.h>

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/f32_inverted_residual.h>
#include <executorch/backends/xnnpack/test/blob_builder.h>
#include <executorch/backends/xnnpack/test/delegate_runner.h>
#include <executorch/backends/xnnpack/test/test_util.h>

namespace {

using executorch::backends::xnnpack::F32DwConv;
using executorch::backends::xnnpack::F32DwConvShape;
using executorch::backends::xnnpack::F32InvertedResidual;
using executorch::backends::xnnpack::F32PointwiseConv;
using executorch::backends::xnnpack::Isa;
using executorch::backends::xnnpack::testing::expect_within_bounds;
using executorch::backends::xnnpack::testing::guarded_output;
using executorch::backends::xnnpack::testing::run_with_host_kernels;

struct Case {
  const char* name;
  size_t batch, in_h, in_w;
  size_t in_c, mid_c, out_c;
  size_t stride, pad;
  bool residual, bias;
  // The expansion's and depthwise's clamp (the projection has none).
  float min, max;
};

size_t out_size(const Case& c, size_t in) {
  return (in + 2 * c.pad - 3) / c.stride + 1;
}

// The block's weights and input, normal with a small deviation (weights)
// so that clamps at +-1 both bite and pass.
struct Block {
  std::vector<float> x, expand_filter, expand_bias, dw_filter, dw_bias,
      project_filter, project_bias;

  explicit Block(const Case& c) {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto fill = [&](std::vector<float>* v, size_t n, float scale) {
      v->resize(n);
      for (float& e : *v) {
        e = scale * normal(rng);
      }
    };
    fill(&x, c.batch * c.in_h * c.in_w * c.in_c, 1.0f);
    fill(&expand_filter, c.mid_c * c.in_c, 0.5f);
    fill(&expand_bias, c.mid_c, c.bias ? 0.5f : 0.0f);
    fill(&dw_filter, 9 * c.mid_c, 0.5f);
    fill(&dw_bias, c.mid_c, c.bias ? 0.5f : 0.0f);
    fill(&project_filter, c.out_c * c.mid_c, 0.2f);
    fill(&project_bias, c.out_c, c.bias ? 0.5f : 0.0f);
  }
};

// The exact output (in double) and the bound on its fp32 error (above).
struct Reference {
  std::vector<double> out;
  std::vector<double> bound;
};

Reference reference(const Case& c, const Block& w) {
  const size_t oh = out_size(c, c.in_h), ow = out_size(c, c.in_w);
  const auto clamp = [&](double v) {
    return std::min(std::max(v, double(c.min)), double(c.max));
  };
  Reference r;
  for (size_t b = 0; b < c.batch; ++b) {
    // Expanded pixels, with their magnitudes.
    std::vector<double> e(c.in_h * c.in_w * c.mid_c), em(e.size());
    for (size_t p = 0; p < c.in_h * c.in_w; ++p) {
      const float* x = w.x.data() + (b * c.in_h * c.in_w + p) * c.in_c;
      for (size_t m = 0; m < c.mid_c; ++m) {
        double acc = w.expand_bias[m], mag = std::fabs(acc);
        for (size_t k = 0; k < c.in_c; ++k) {
          const double t = double(w.expand_filter[m * c.in_c + k]) * x[k];
          acc += t;
          mag += std::fabs(t);
        }
        e[p * c.mid_c + m] = clamp(acc);
        em[p * c.mid_c + m] = mag;
      }
    }
    for (size_t oy = 0; oy < oh; ++oy) {
      for (size_t ox = 0; ox < ow; ++ox) {
        std::vector<double> d(c.mid_c), dm(c.mid_c);
        for (size_t m = 0; m < c.mid_c; ++m) {
          double acc = w.dw_bias[m], mag = std::fabs(acc);
          for (size_t ky = 0; ky < 3; ++ky) {
            for (size_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = int64_t(oy * c.stride + ky) - int64_t(c.pad);
              const int64_t ix = int64_t(ox * c.stride + kx) - int64_t(c.pad);
              if (iy < 0 || ix < 0 || iy >= int64_t(c.in_h) ||
                  ix >= int64_t(c.in_w)) {
                continue;
              }
              const size_t at =
                  (size_t(iy) * c.in_w + size_t(ix)) * c.mid_c + m;
              const double f = w.dw_filter[(ky * 3 + kx) * c.mid_c + m];
              acc += f * e[at];
              mag += std::fabs(f) * em[at];
            }
          }
          d[m] = clamp(acc);
          dm[m] = mag;
        }
        for (size_t o = 0; o < c.out_c; ++o) {
          double acc = w.project_bias[o], mag = std::fabs(acc);
          for (size_t m = 0; m < c.mid_c; ++m) {
            const double f = w.project_filter[o * c.mid_c + m];
            acc += f * d[m];
            mag += std::fabs(f) * dm[m];
          }
          if (c.residual) {
            const double x =
                w.x[((b * c.in_h + oy) * c.in_w + ox) * c.in_c + o];
            acc += x;
            mag += std::fabs(x);
          }
          r.out.push_back(acc);
          r.bound.push_back(2.0 * double(c.in_c + c.mid_c + 13) *
                            std::ldexp(mag, -24));
        }
      }
    }
  }
  return r;
}

// The block's kernel for `isa`; null (a test failure) when init refuses.
std::unique_ptr<F32InvertedResidual> make_block(const Case& c,
                                                const Block& w,
                                                Isa isa) {
  F32DwConvShape dw;
  dw.stride_h = dw.stride_w = c.stride;
  dw.pad_top = dw.pad_left = c.pad;
  dw.channels = c.mid_c;
  dw.output_min = c.min;
  dw.output_max = c.max;
  auto depthwise = std::make_shared<F32DwConv>();
  if (!depthwise->init(dw, w.dw_filter.data(), w.dw_bias.data())) {
    return nullptr;
  }
  const F32PointwiseConv expand{w.expand_filter.data(),
                                c.bias ? w.expand_bias.data() : nullptr,
                                c.in_c,
                                c.mid_c,
                                c.min,
                                c.max};
  const F32PointwiseConv project{w.project_filter.data(),
                                 c.bias ? w.project_bias.data() : nullptr,
                                 c.mid_c,
                                 c.out_c};
  auto block = std::make_unique<F32InvertedResidual>();
  if (!block->init(expand, depthwise, project, c.residual, isa)) {
    return nullptr;
  }
  return block;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class F32InvertedResidualTest : public ::testing::TestWithParam<Case> {};

TEST_P(F32InvertedResidualTest, MatchesTheDoubleReference) {
  const Case& c = GetParam();
  const Block w(c);
  const Reference want = reference(c, w);
  const size_t oh = out_size(c, c.in_h), ow = out_size(c, c.in_w);
  pthreadpool_t two = pthreadpool_create(2);
  pthreadpool_t three = pthreadpool_create(3);
  ASSERT_FALSE(F32DwConv::available_isas().empty());
  for (Isa isa : F32DwConv::available_isas()) {
    const auto block = make_block(c, w, isa);
    ASSERT_NE(block, nullptr) << executorch::kernels::optimized::isa_name(isa);
    for (pthreadpool_t pool : {pthreadpool_t(nullptr), two, three}) {
      std::vector<float> got = guarded_output(want.out.size());
      ASSERT_TRUE(block->run(
          w.x.data(), c.batch, c.in_h, c.in_w, got.data(), oh, ow, pool));
      expect_within_bounds(
          got,
          want.out,
          want.bound,
          std::string(executorch::kernels::optimized::isa_name(isa)) + ", " +
              std::to_string(pool ? pthreadpool_get_threads_count(pool) : 1) +
              " threads");
    }
  }
  pthreadpool_destroy(three);
  pthreadpool_destroy(two);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    F32InvertedResidualTest,
    ::testing::Values(
        // MobileNetV2's residual block, smaller: ReLU6, 5 rows of 11
        // pixels (chunks of 11 rows: one partial chunk), 2 images.
        Case{"residual_relu6", 2, 5, 11, 8, 48, 8, 1, 1, true, true, 0, 6},
        // Stride 2, odd sizes; channels that fill no vector (5 in, 30
        // expanded: a partial 1x1 block and depthwise block, 7 out).
        Case{"stride2_odd_channels",
             1,
             9,
             13,
             5,
             30,
             7,
             2,
             1,
             false,
             true,
             -1,
             1},
        // 3 pixels a row: chunks of 42 rows, more than the image; the
        // ring (42 + 2 rows) never wraps. No biases, no clamp.
        Case{"narrow_rows_no_bias",
             1,
             20,
             3,
             4,
             24,
             4,
             1,
             1,
             true,
             false,
             -INFINITY,
             INFINITY},
        // 64 pixels a row: chunks of 2 rows and a ring of 4 at stride 1,
        // of 4 output rows (32 pixels) and a ring of 10 at stride 2; both
        // wrap down 23 rows.
        Case{"ring_wraps_stride1", 1, 23, 64, 6, 36, 6, 1, 1, true, true, 0, 6},
        Case{"ring_wraps_stride2",
             2,
             23,
             64,
             6,
             36,
             10,
             2,
             1,
             false,
             true,
             0,
             6},
        // No padding, and padding 2 (top rows and columns read nothing).
        Case{"pad0", 1, 7, 9, 3, 20, 5, 1, 0, false, true, -2, 2},
        Case{"pad2", 1, 6, 6, 3, 17, 3, 2, 2, false, true, 0, 6},
        // 1x1 and 1x2 images: every window mostly padding, one band.
        Case{"one_pixel", 1, 1, 1, 16, 96, 16, 1, 1, true, true, 0, 6},
        Case{"one_row", 2, 1, 2, 16, 40, 24, 2, 1, false, true, 0, 6}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.name);
    });

TEST(F32InvertedResidualInitTest, RefusesConvolutionsThatDoNotChain) {
  const Case c{"chain", 1, 4, 4, 8, 24, 8, 1, 1, true, true, 0, 6};
  const Block w(c);
  const Isa isa = F32DwConv::selected_isa();
  ASSERT_NE(make_block(c, w, isa), nullptr);
  F32DwConvShape dw;
  dw.channels = 24;
  auto depthwise = std::make_shared<F32DwConv>();
  ASSERT_TRUE(depthwise->init(dw, w.dw_filter.data(), nullptr));
  const F32PointwiseConv expand{w.expand_filter.data(), nullptr, 8, 24};
  const F32PointwiseConv project{w.project_filter.data(), nullptr, 24, 8};
  F32InvertedResidual block;
  // The depthwise convolution over another channel count than expand's.
  F32PointwiseConv wide = expand;
  wide.out_channels = 32;
  EXPECT_FALSE(block.init(wide, depthwise, project, false, isa));
  // The projection reading another channel count.
  F32PointwiseConv narrow = project;
  narrow.in_channels = 16;
  EXPECT_FALSE(block.init(expand, depthwise, narrow, false, isa));
  // A residual with other output than input channels, or stride 2.
  F32PointwiseConv more = project;
  more.out_channels = 12;
  EXPECT_FALSE(block.init(expand, depthwise, more, true, isa));
  F32DwConvShape strided = dw;
  strided.stride_h = strided.stride_w = 2;
  auto strided_depthwise = std::make_shared<F32DwConv>();
  ASSERT_TRUE(strided_depthwise->init(strided, w.dw_filter.data(), nullptr));
  EXPECT_FALSE(block.init(expand, strided_depthwise, project, true, isa));
  EXPECT_TRUE(block.init(expand, strided_depthwise, project, false, isa));
  EXPECT_FALSE(block.init(expand, nullptr, project, false, isa));
}

TEST(F32InvertedResidualEmptyTest, EmptyTensorsWriteNothing) {
  const Case c{"empty", 1, 4, 4, 8, 24, 8, 1, 1, true, true, 0, 6};
  const Block w(c);
  const auto block = make_block(c, w, F32DwConv::selected_isa());
  ASSERT_NE(block, nullptr);
  float out[8] = {7, 7, 7, 7, 7, 7, 7, 7};
  EXPECT_TRUE(block->run(w.x.data(), 0, 4, 4, out, 4, 4, nullptr));
  EXPECT_TRUE(block->run(w.x.data(), 1, 4, 4, out, 0, 4, nullptr));
  EXPECT_TRUE(block->run(w.x.data(), 1, 4, 4, out, 4, 0, nullptr));
  EXPECT_EQ(std::count(out, out + 8, 7.0f), 8);
}

// The four nodes upstream's partitioner writes for a MobileNetV2 block
// (1x1 convolution with ReLU6, depthwise 3x3 with ReLU6, 1x1 convolution,
// add of the block's input), with an expanded tensor past the fusion's
// threshold (32 x 32 x 288 floats, 1.2 MB), run by the backend as one
// fused host step and, with EXECUTORCH_XNNPACK_HOST_KERNELS=0, node by node
// on XNNPACK: both within the bound above of the reference.
TEST(F32InvertedResidualNodeTest, FusedStepAndXnnpackMatchTheReference) {
  using executorch::backends::xnnpack::testing::BlobBuilder;
  using executorch::backends::xnnpack::testing::conv_params;
  using executorch::backends::xnnpack::testing::NodeKind;

  const Case c{"node", 1, 32, 32, 48, 288, 48, 1, 1, true, true, 0, 6};
  ASSERT_TRUE(F32InvertedResidual::pays(c.in_h, c.in_w, c.mid_c));
  const Block w(c);
  const uint32_t h = 32, wd = 32, in_c = 48, mid_c = 288;
  BlobBuilder b;
  const uint32_t input = b.input({1, h, wd, in_c}, 0);
  const uint32_t expanded = b.tensor({1, h, wd, mid_c});
  const uint32_t filtered = b.tensor({1, h, wd, mid_c});
  const uint32_t projected = b.tensor({1, h, wd, in_c});
  const uint32_t output = b.output({1, h, wd, in_c}, 1);
  b.node(NodeKind::XNNConv2d,
         {input,
          b.constant({mid_c, 1, 1, in_c}, w.expand_filter),
          b.constant({mid_c}, w.expand_bias)},
         expanded,
         conv_params(1, 1, 0, 1, 1, in_c, mid_c),
         std::make_pair(0.0f, 6.0f));
  b.node(NodeKind::XNNDepthwiseConv2d,
         {expanded,
          b.constant({1, 3, 3, mid_c}, w.dw_filter),
          b.constant({mid_c}, w.dw_bias)},
         filtered,
         conv_params(3, 1, 1, 1, mid_c, 1, 1),
         std::make_pair(0.0f, 6.0f));
  b.node(NodeKind::XNNConv2d,
         {filtered,
          b.constant({in_c, 1, 1, mid_c}, w.project_filter),
          b.constant({in_c}, w.project_bias)},
         projected,
         conv_params(1, 1, 0, 1, 1, mid_c, in_c));
  b.node(NodeKind::XNNAdd, {projected, input}, output);
  const std::vector<uint8_t> blob = b.build();

  const Reference want = reference(c, w);
  for (const char* host_kernels : {"1", "0"}) {
    expect_within_bounds(
        run_with_host_kernels(
            blob, host_kernels, {1, h, wd, in_c}, w.x, {1, h, wd, in_c}),
        want.out,
        want.bound,
        std::string("EXECUTORCH_XNNPACK_HOST_KERNELS=") + host_kernels,
        /*guarded=*/false);
  }
}

} // namespace

#endif // EXECUTORCH_XNNPACK_OPTIMIZED_HOST
