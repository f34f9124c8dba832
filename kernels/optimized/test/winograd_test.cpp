// Winograd F(4x4, 3x3) (cpu/winograd.h) against a direct convolution in
// double, for each instruction set this CPU runs: odd sizes that end inside
// a tile, padding 0/1/2 on either side, batches, channel counts that are not
// multiples of the vector width or of the microkernel's tiles, more input
// channels than one microkernel depth slice, clamps, no bias, a single
// tile, several blocks, and the channel split that idle threads get.
//
// Tolerance: |got - ref| <= 1e-5 * S, S the output channel's largest sum of
// |w * x| over a window (kTolerance). Direct float32 summation errs by
// ~1e-7 of the window's own sum; the transforms mix the whole 6x6 window
// and scale the rounding by their entries (up to 8 in A, 5 in B), so an
// output's error follows its tile's magnitude, not its own (a corner pixel
// of a padded image sums few terms but shares rounding with its tile). The
// test prints the worst ratio seen; kernels/optimized/README.md states the
// error at ResNet-18's shapes.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <executorch/kernels/optimized/cpu/winograd.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace opt = executorch::kernels::optimized;

namespace {

constexpr double kTolerance = 1e-5;

struct Case {
  const char* name;
  int64_t batch, in_c, out_c, in_h, in_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  bool bias;
  float min, max;
};

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) {
    x = dist(rng);
  }
  return v;
}

// Runs `c` through Winograd3x3 (NHWC, filter OIHW, the tasks of a plan for
// `threads` threads run one after another) and checks it; `worst` grows to
// the largest error seen, relative to the window's sum of |w * x|.
void check(const Case& c, int64_t threads, double* worst) {
  const int64_t out_h = c.in_h + c.pad_top + c.pad_bottom - 2;
  const int64_t out_w = c.in_w + c.pad_left + c.pad_right - 2;
  const auto in = random_values(c.batch * c.in_h * c.in_w * c.in_c, 1);
  const auto filter = random_values(c.out_c * c.in_c * 9, 2);
  const auto bias = random_values(c.out_c, 3);
  opt::Winograd3x3 wg;
  ASSERT_TRUE(wg.init(c.in_c, c.out_c));
  std::vector<float> packed(wg.packed_floats());
  wg.pack(filter.data(),
          c.in_c * 9,
          9,
          3,
          1,
          c.bias ? bias.data() : nullptr,
          packed.data());
  opt::WinogradIo io;
  io.in = in.data();
  io.in_sn = c.in_h * c.in_w * c.in_c;
  io.in_sh = c.in_w * c.in_c;
  io.in_sw = c.in_c;
  std::vector<float> out(c.batch * out_h * out_w * c.out_c, NAN);
  io.out = out.data();
  io.out_sn = out_h * out_w * c.out_c;
  io.out_sh = out_w * c.out_c;
  io.out_sw = c.out_c;
  io.batch = c.batch;
  io.in_h = c.in_h;
  io.in_w = c.in_w;
  io.out_h = out_h;
  io.out_w = out_w;
  io.pad_top = c.pad_top;
  io.pad_left = c.pad_left;
  io.min = c.min;
  io.max = c.max;
  std::vector<char> scratch(wg.scratch_bytes(io, threads) + 64);
  void* aligned = reinterpret_cast<void*>(
      (reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
  const int64_t tasks = wg.tasks(io, threads);
  ASSERT_GE(tasks, 1);
  for (int64_t t = 0; t < tasks; ++t) {
    wg.run(io, threads, t, aligned);
  }
  // The reference and, per output channel, the largest sum of |w * x| over
  // a window: the transforms mix a whole 6x6 window, so an output's
  // rounding follows its tile's magnitude rather than its own.
  const size_t outputs = out.size();
  std::vector<double> ref(outputs);
  std::vector<double> scale(c.out_c, 1e-6);
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t y = 0; y < out_h; ++y) {
      for (int64_t x = 0; x < out_w; ++x) {
        for (int64_t k = 0; k < c.out_c; ++k) {
          double sum = c.bias ? bias[k] : 0.0;
          double magnitude = std::fabs(sum);
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y - c.pad_top + ky;
              const int64_t ix = x - c.pad_left + kx;
              if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) {
                continue;
              }
              for (int64_t ci = 0; ci < c.in_c; ++ci) {
                const double term =
                    static_cast<double>(
                        filter[((k * c.in_c + ci) * 3 + ky) * 3 + kx]) *
                    in[((n * c.in_h + iy) * c.in_w + ix) * c.in_c + ci];
                sum += term;
                magnitude += std::fabs(term);
              }
            }
          }
          ref[((n * out_h + y) * out_w + x) * c.out_c + k] =
              std::min<double>(std::max<double>(sum, c.min), c.max);
          scale[k] = std::max(scale[k], magnitude);
        }
      }
    }
  }
  size_t bad = 0;
  for (size_t i = 0; i < outputs; ++i) {
    const double limit = scale[i % c.out_c];
    const double err = std::fabs(out[i] - ref[i]);
    *worst = std::max(*worst, err / limit);
    if (!(err <= kTolerance * limit)) {
      if (++bad <= 3) {
        ADD_FAILURE() << c.name << " [" << i << "]: got " << out[i]
                      << " expected " << ref[i];
      }
    }
  }
  EXPECT_EQ(bad, 0u) << c.name << ", " << threads << " threads";
}

class Winograd : public ::testing::TestWithParam<opt::Isa> {
 protected:
  void SetUp() override {
    if (!opt::isa_available(GetParam())) {
      GTEST_SKIP() << opt::isa_name(GetParam()) << " is not available here";
    }
    previous_ = opt::selected_isa();
    ASSERT_TRUE(opt::select_isa_for_testing(GetParam()));
  }
  void TearDown() override {
    opt::select_isa_for_testing(previous_);
  }

 private:
  opt::Isa previous_ = opt::Isa::kPortable;
};

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST_P(Winograd, AgainstDirectConvolution) {
  const std::vector<Case> cases = {
      {"single tile", 1, 3, 5, 4, 4, 0, 0, 2, 2, true, -kInf, kInf},
      {"odd sizes pad 1", 2, 17, 19, 13, 11, 1, 1, 1, 1, true, -kInf, kInf},
      {"pad 0", 1, 8, 40, 9, 7, 0, 0, 0, 0, true, -kInf, kInf},
      {"pad 2", 1, 5, 33, 6, 10, 2, 2, 2, 2, false, -kInf, kInf},
      {"uneven padding", 1, 7, 9, 5, 8, 0, 2, 1, 0, true, -kInf, kInf},
      {"non-square", 3, 16, 16, 3, 21, 1, 1, 1, 1, true, -kInf, kInf},
      {"relu6 clamp", 1, 12, 20, 9, 9, 1, 1, 1, 1, true, 0.0f, 0.5f},
      {"no bias relu", 2, 9, 35, 7, 5, 1, 1, 1, 1, false, 0.0f, kInf},
      // Two microkernel depth slices (300 > 256) and several blocks.
      {"deep", 1, 300, 70, 11, 12, 1, 1, 1, 1, true, -kInf, kInf},
      {"many tiles", 2, 64, 64, 30, 26, 1, 1, 1, 1, true, -kInf, kInf},
  };
  double worst = 0.0;
  for (const Case& c : cases) {
    for (int64_t threads : {1, 2, 5}) {
      check(c, threads, &worst);
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
  std::printf("worst error / sum |w * x|: %.3g\n", worst);
}

TEST_P(Winograd, EmptyBatchHasNoTasks) {
  opt::Winograd3x3 wg;
  ASSERT_TRUE(wg.init(16, 16));
  opt::WinogradIo io;
  io.in_h = io.in_w = io.out_h = io.out_w = 8;
  for (int64_t threads : {1, 2}) {
    EXPECT_EQ(wg.tasks(io, threads), 0);
  }
}

std::string isa_param_name(const ::testing::TestParamInfo<opt::Isa>& info) {
  return opt::isa_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(AllIsas,
                         Winograd,
                         ::testing::Values(opt::Isa::kPortable,
                                           opt::Isa::kAvx2,
                                           opt::Isa::kAvx512),
                         isa_param_name);

} // namespace
