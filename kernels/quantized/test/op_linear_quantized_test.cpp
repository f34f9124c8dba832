// weight_only_linear and dynamic_int8_linear_panels against scalar references
// written out here, on every instruction set the CPU has (AVX-512 VNNI,
// AVX2, portable): 4- and 8-bit weights, group sizes 8 to 384, zero points,
// bias, odd numbers of output features (dynamic_int8_linear_panels's panels of
// 16 packed here from the layout's definition, the last one partial; K padded
// to whole words), input widths that exercise the
// vector loops and their tails (and widths the VNNI kernels leave to the
// others), one to 17 input rows (the VNNI GEMV and GEMM tiles),
// per-tensor and per-token activation quantization (and its min/max and
// quantize loops on their own: ties, saturation, NaN, tails), weights at the
// int8 limits, bad arguments, empty inputs, and the same results on one
// thread as on several.

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/quantized/cpu/quantized_linear.h>
#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/threadpool.h>
#endif

using namespace torch::executor::testing;
namespace native = torch::executor::native;

namespace {

struct Case {
  int bits;
  int64_t rows; // N
  int64_t cols; // K
  int64_t group;
  bool zero_points;
};

// Bytes per output feature of the panel layout (quantized_linear.h):
// words of 4 values of 8 bits or 8 of 4 bits, K padded to whole words.
int64_t panel_row_bytes(int bits, int64_t cols) {
  const int64_t per_word = bits == 4 ? 8 : 4;
  return (cols + per_word - 1) / per_word * 4;
}

// values [N, K] in the panel layout, written out from its definition:
// feature n0 + l's word u at n0 * row_bytes + u * lanes * 4 + l * 4; 8-bit
// values + 128, 4-bit ones + 8, value j of a word in byte j % 4's low
// nibble for j < 4, high nibble otherwise; padding values are 0.
std::vector<uint8_t> pack_panels(const std::vector<int32_t>& values,
                                 int64_t rows,
                                 int64_t cols,
                                 int bits) {
  const int64_t row_bytes = panel_row_bytes(bits, cols);
  const int64_t per_word = bits == 4 ? 8 : 4;
  std::vector<uint8_t> out(rows * row_bytes, 0);
  for (int64_t n = 0; n < rows; ++n) {
    const int64_t n0 = n / 16 * 16;
    const int64_t lanes = std::min<int64_t>(16, rows - n0);
    for (int64_t k = 0; k < row_bytes / 4 * per_word; ++k) {
      const int32_t v = k < cols ? values[n * cols + k] : 0;
      const int64_t u = k / per_word, j = k % per_word;
      uint8_t& byte =
          out[n0 * row_bytes + u * lanes * 4 + (n - n0) * 4 + j % 4];
      if (bits == 8) {
        byte = static_cast<uint8_t>(v + 128);
      } else {
        byte |= static_cast<uint8_t>((v + 8) << (j < 4 ? 0 : 4));
      }
    }
  }
  return out;
}

// Deterministic values in the weight's range, and their packing in rows
// (weight_only_linear) and panels (dynamic_int8_linear_panels).
struct Weights {
  std::vector<int32_t> values; // [N, K]
  std::vector<uint8_t> packed;
  std::vector<uint8_t> panels;
  std::vector<float> scales; // [N, K / group]
  std::vector<int8_t> zero_points;

  explicit Weights(const Case& c) {
    const int32_t lo = c.bits == 4 ? -8 : -128, span = c.bits == 4 ? 16 : 256;
    for (int64_t i = 0; i < c.rows * c.cols; ++i) {
      values.push_back(lo + static_cast<int32_t>((i * 7919 + 13) % span));
    }
    for (int64_t i = 0; i < c.rows * (c.cols / c.group); ++i) {
      scales.push_back(0.01f + 0.003f * static_cast<float>(i % 11));
      zero_points.push_back(c.zero_points ? static_cast<int8_t>((i % 5) - 2)
                                          : int8_t(0));
    }
    pack(c);
  }

  void pack(const Case& c) {
    packed.clear();
    if (c.bits == 8) {
      for (int32_t v : values) {
        packed.push_back(static_cast<uint8_t>(static_cast<int8_t>(v)));
      }
    } else {
      for (size_t i = 0; i < values.size(); i += 2) {
        packed.push_back(
            static_cast<uint8_t>(((values[i] + 8) << 4) | (values[i + 1] + 8)));
      }
    }
    panels = pack_panels(values, c.rows, c.cols, c.bits);
  }

  // The panel-layout weight tensor's sizes.
  std::vector<int32_t> panel_sizes(const Case& c) const {
    return {static_cast<int32_t>(c.rows),
            static_cast<int32_t>(panel_row_bytes(c.bits, c.cols))};
  }

  float weight(const Case& c, int64_t n, int64_t k) const {
    const int64_t p = n * (c.cols / c.group) + k / c.group;
    return static_cast<float>(values[n * c.cols + k] - zero_points[p]) *
           scales[p];
  }
};

std::vector<float> inputs(int64_t count) {
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) {
    x[i] = std::sin(static_cast<float>(i) * 0.37f) * 2.f + 0.25f;
  }
  return x;
}

std::vector<float> reference_linear(const Case& c,
                                    const Weights& w,
                                    const std::vector<float>& x,
                                    const std::vector<float>& bias) {
  const int64_t m = static_cast<int64_t>(x.size()) / c.cols;
  std::vector<float> y(m * c.rows);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t n = 0; n < c.rows; ++n) {
      double sum = bias[n];
      for (int64_t k = 0; k < c.cols; ++k) {
        sum += static_cast<double>(x[i * c.cols + k]) * w.weight(c, n, k);
      }
      y[i * c.rows + n] = static_cast<float>(sum);
    }
  }
  return y;
}

// x quantized to int8 with asymmetric parameters over each span, then
// dequantized: what dynamic_int8_linear_panels multiplies.
std::vector<float> fake_quantize(const std::vector<float>& x, int64_t span) {
  std::vector<float> out(x.size());
  for (size_t begin = 0; begin < x.size(); begin += span) {
    float lo = 0.f, hi = 0.f;
    for (size_t i = begin; i < begin + span; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    const float scale = std::max((hi - lo) / 255.f, 1e-6f);
    const float zp =
        std::min(127.f, std::max(-128.f, -128.f - std::nearbyint(lo / scale)));
    for (size_t i = begin; i < begin + span; ++i) {
      const float q = std::min(
          127.f, std::max(-128.f, std::nearbyint(x[i] * (1.f / scale)) + zp));
      out[i] = (q - zp) * scale;
    }
  }
  return out;
}

void expect_close(const std::vector<float>& actual,
                  const std::vector<float>& expected,
                  float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
  }
}

// Float sums of up to a few hundred terms: 1e-4 absolute, or a few float
// roundings of the largest output.
float tolerance_for(const std::vector<float>& expected) {
  float largest = 0.f;
  for (float e : expected) {
    largest = std::max(largest, std::fabs(e));
  }
  return std::max(1e-4f, 4e-6f * largest);
}

const Case kCases[] = {
    {4, 5, 64, 32, false},
    {4, 3, 256, 128, true},
    {4, 4, 96, 96, false}, // one group per row; K not a multiple of 64
    {8, 6, 40, 40, true},  // per channel, K with a vector tail
    {8, 3, 128, 64, false},
    {4, 37, 512, 256, true}, // 3 panels of 16 features, the last partial
    {4, 17, 192, 64, false},
    {4, 9, 136, 8, true},     // a group per 8-value word
    {4, 23, 384, 128, false}, // 8da4w's groups of 128, no zero points
    {8, 19, 384, 384, false}, // per channel, as PT2E's dynamic linears
    {8, 37, 256, 256, true},  // per channel: a pair of panels, then one
    {8, 33, 100, 100, false}, // per channel, K not a multiple of 16
    {8, 5, 36, 12, true},
    {4, 3, 20, 10, false}, // K not a multiple of 8: not for VNNI
    {8, 3, 42, 14, true},  // K not a multiple of 4: not for VNNI
};

} // namespace

using native::quantized::Isa;

// Every loop kind the CPU can run (the others skip).
class QuantizedLinearTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    native::quantized::set_isa_limit(GetParam());
    if (native::quantized::best_isa() != GetParam()) {
      GTEST_SKIP() << "this CPU lacks the instruction set";
    }
  }
  void TearDown() override {
    native::quantized::set_isa_limit(Isa::kAvx512Vnni);
  }
};

INSTANTIATE_TEST_SUITE_P(
    Loops,
    QuantizedLinearTest,
    ::testing::Values(Isa::kAvx512Vnni, Isa::kAvx2, Isa::kPortable),
    [](const auto& info) {
      return info.param == Isa::kAvx512Vnni
                 ? "Vnni"
                 : (info.param == Isa::kAvx2 ? "Avx2" : "Portable");
    });

TEST_P(QuantizedLinearTest, MatchesTheReference) {
  for (const Case& c : kCases) {
    for (int64_t m : {1, 2, 3, 4, 9, 14, 17}) {
      TempContext ctx;
      const Weights w(c);
      const std::vector<float> x = inputs(m * c.cols);
      std::vector<float> bias(c.rows);
      for (int64_t n = 0; n < c.rows; ++n) {
        bias[n] = 0.1f * static_cast<float>(n) - 0.2f;
      }
      TestTensor xt(ScalarType::Float,
                    {static_cast<int32_t>(m), static_cast<int32_t>(c.cols)},
                    x);
      TestTensor wt(ScalarType::Byte,
                    {static_cast<int32_t>(c.rows),
                     static_cast<int32_t>(c.bits == 4 ? c.cols / 2 : c.cols)},
                    w.packed);
      TestTensor st(ScalarType::Float,
                    {static_cast<int32_t>(c.rows),
                     static_cast<int32_t>(c.cols / c.group)},
                    w.scales);
      TestTensor zt(ScalarType::Char,
                    {static_cast<int32_t>(c.rows),
                     static_cast<int32_t>(c.cols / c.group)},
                    w.zero_points);
      TestTensor bt(ScalarType::Float, {static_cast<int32_t>(c.rows)}, bias);
      TestTensor out(ScalarType::Float,
                     {static_cast<int32_t>(m), static_cast<int32_t>(c.rows)},
                     zeros(m * c.rows));
      native::weight_only_linear_out(ctx.get(),
                                     xt,
                                     wt,
                                     st,
                                     std::optional<Tensor>(zt.tensor()),
                                     c.bits,
                                     c.group,
                                     std::optional<Tensor>(bt.tensor()),
                                     out);
      ASSERT_EQ(ctx.get().failure_state(), Error::Ok)
          << c.bits << " " << c.cols;
      const std::vector<float> expected = reference_linear(c, w, x, bias);
      expect_close(out.values<float>(), expected, tolerance_for(expected));

      TestTensor pt(ScalarType::Byte, w.panel_sizes(c), w.panels);
      for (bool per_token : {true, false}) {
        TempContext ctx2;
        native::dynamic_int8_linear_panels_out(
            ctx2.get(),
            xt,
            pt,
            st,
            std::optional<Tensor>(zt.tensor()),
            c.bits,
            c.group,
            std::optional<Tensor>(bt.tensor()),
            per_token,
            1e-6,
            -128,
            127,
            out);
        ASSERT_EQ(ctx2.get().failure_state(), Error::Ok);
        const std::vector<float> xdq =
            fake_quantize(x, per_token ? c.cols : m * c.cols);
        const std::vector<float> expected = reference_linear(c, w, xdq, bias);
        SCOPED_TRACE(testing::Message()
                     << "bits " << c.bits << " N " << c.rows << " K " << c.cols
                     << " group " << c.group << " M " << m << " per_token "
                     << per_token);
        expect_close(out.values<float>(), expected, tolerance_for(expected));
      }
    }
  }
}

// Weights at their type's limits and inputs whose quantized values reach
// -128 and 127 over long rows, with zero points in the middle and at -128:
// the integer sums (and the offsets the VNNI kernels take out of them)
// stay exact.
TEST_P(QuantizedLinearTest, ExtremeValuesSumExactly) {
  for (int bits : {4, 8}) {
    const Case c{bits, 18, 512, bits == 4 ? 128 : 512, false};
    Weights w(c);
    const int32_t lo = bits == 4 ? -8 : -128, hi = bits == 4 ? 7 : 127;
    for (int64_t i = 0; i < c.rows * c.cols; ++i) {
      w.values[i] = (i / 3) % 2 == 0 ? lo : hi;
    }
    w.pack(c);
    // Rows of positive inputs get the zero point -128.
    for (auto [m, shift] :
         {std::pair<int64_t, float>{1, 0.f}, {5, 0.f}, {1, 3.5f}, {5, 3.5f}}) {
      std::vector<float> x(m * c.cols);
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = shift +
               (i % 2 == 0 ? -3.f : 2.f + 0.001f * static_cast<float>(i % 7));
      }
      TestTensor xt(ScalarType::Float, {static_cast<int32_t>(m), 512}, x);
      TestTensor wt(ScalarType::Byte, w.panel_sizes(c), w.panels);
      TestTensor st(ScalarType::Float,
                    {18, static_cast<int32_t>(c.cols / c.group)},
                    w.scales);
      TestTensor out(
          ScalarType::Float, {static_cast<int32_t>(m), 18}, zeros(m * 18));
      TempContext ctx;
      native::dynamic_int8_linear_panels_out(ctx.get(),
                                             xt,
                                             wt,
                                             st,
                                             std::nullopt,
                                             bits,
                                             c.group,
                                             std::nullopt,
                                             true,
                                             1e-6,
                                             -128,
                                             127,
                                             out);
      ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
      const std::vector<float> expected = reference_linear(
          c, w, fake_quantize(x, c.cols), std::vector<float>(18, 0.f));
      expect_close(out.values<float>(), expected, tolerance_for(expected));
    }
  }
}

TEST(QuantizedLinearArgsTest, LeadingDimsAndNoBias) {
  TempContext ctx;
  const Case c{4, 2, 32, 32, false};
  const Weights w(c);
  const std::vector<float> x = inputs(2 * 3 * 32);
  TestTensor xt(ScalarType::Float, {2, 3, 32}, x);
  TestTensor wt(ScalarType::Byte, {2, 16}, w.packed);
  TestTensor st(ScalarType::Float, {2, 1}, w.scales);
  TestTensor out(ScalarType::Float, {2, 3, 2}, zeros(12));
  native::weight_only_linear_out(
      ctx.get(), xt, wt, st, std::nullopt, 4, 32, std::nullopt, out);
  ASSERT_EQ(ctx.get().failure_state(), Error::Ok);
  EXPECT_EQ(out.sizes(), (std::vector<int32_t>{2, 3, 2}));
  expect_close(out.values<float>(),
               reference_linear(c, w, x, std::vector<float>(2, 0.f)),
               1e-4f);
}

// Runs both linears on `c` with an m-row input; returns their outputs
// (weight-only, then dynamic per token) after checking they succeeded.
std::vector<float> run_both(const Case& c, int64_t m) {
  const Weights w(c);
  const std::vector<float> x = inputs(m * c.cols);
  const int32_t rows = static_cast<int32_t>(c.rows);
  const int32_t groups = static_cast<int32_t>(c.cols / c.group);
  TestTensor xt(ScalarType::Float,
                {static_cast<int32_t>(m), static_cast<int32_t>(c.cols)},
                x);
  TestTensor wt(ScalarType::Byte,
                {rows, static_cast<int32_t>(c.bits == 4 ? c.cols / 2 : c.cols)},
                w.packed);
  TestTensor pt(ScalarType::Byte, w.panel_sizes(c), w.panels);
  TestTensor st(ScalarType::Float, {rows, groups}, w.scales);
  std::vector<float> results;
  for (bool dynamic : {false, true}) {
    TempContext ctx;
    TestTensor out(
        ScalarType::Float, {static_cast<int32_t>(m), rows}, zeros(m * c.rows));
    if (dynamic) {
      native::dynamic_int8_linear_panels_out(ctx.get(),
                                             xt,
                                             pt,
                                             st,
                                             std::nullopt,
                                             c.bits,
                                             c.group,
                                             std::nullopt,
                                             true,
                                             1e-6,
                                             -128,
                                             127,
                                             out);
    } else {
      native::weight_only_linear_out(ctx.get(),
                                     xt,
                                     wt,
                                     st,
                                     std::nullopt,
                                     c.bits,
                                     c.group,
                                     std::nullopt,
                                     out);
    }
    EXPECT_EQ(ctx.get().failure_state(), Error::Ok);
    const std::vector<float> y = out.values<float>();
    results.insert(results.end(), y.begin(), y.end());
  }
  return results;
}

// A NaN anywhere in a row (also in the vector loops' tail) fails the call
// instead of quantizing to garbage.
TEST_P(QuantizedLinearTest, NanInputFails) {
  const Case c{8, 4, 40, 40, false};
  const Weights w(c);
  for (int64_t at : {0, 17, 39}) {
    std::vector<float> x = inputs(2 * 40);
    x[40 + at] = NAN;
    TestTensor xt(ScalarType::Float, {2, 40}, x);
    TestTensor wt(ScalarType::Byte, w.panel_sizes(c), w.panels);
    TestTensor st(ScalarType::Float, {4, 1}, w.scales);
    TestTensor out(ScalarType::Float, {2, 4}, zeros(8));
    for (bool per_token : {true, false}) {
      TempContext ctx;
      native::dynamic_int8_linear_panels_out(ctx.get(),
                                             xt,
                                             wt,
                                             st,
                                             std::nullopt,
                                             8,
                                             40,
                                             std::nullopt,
                                             per_token,
                                             1e-6,
                                             -128,
                                             127,
                                             out);
      EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument) << at;
    }
  }
}

TEST(QuantizedLinearArgsTest, EmptyInputGivesEmptyOutput) {
  const Case c{8, 4, 32, 32, false};
  EXPECT_TRUE(run_both(c, 0).empty());
}

#ifdef ET_USE_THREADPOOL
// Output features are split over threads, each output computed by one
// thread in the same order: bit-identical to one thread, and to the
// reference. Big enough to be split into four runs.
TEST(QuantizedLinearThreadsTest, SeveralThreadsMatchOneBitForBit) {
  auto* pool = ::executorch::extension::threadpool::get_threadpool();
  const size_t threads = pool->get_thread_count();
  for (int bits : {4, 8}) {
    const Case c{bits, 16384, 128, 32, false};
    ASSERT_GE(c.rows * c.cols * 4, 4 * native::quantized::kMinRunWork);
    ASSERT_TRUE(pool->_unsafe_reset_threadpool(1));
    const std::vector<float> one = run_both(c, 4);
    ASSERT_TRUE(pool->_unsafe_reset_threadpool(4));
    EXPECT_EQ(native::quantized::scratch_slices(), 4u);
    const std::vector<float> four = run_both(c, 4);
    ASSERT_EQ(one.size(), four.size());
    for (size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(one[i], four[i]) << "bits " << bits << " at " << i;
    }
    const Weights w(c);
    const std::vector<float> expected = reference_linear(
        c, w, inputs(4 * c.cols), std::vector<float>(c.rows, 0.f));
    float largest = 0.f;
    for (float e : expected) {
      largest = std::max(largest, std::fabs(e));
    }
    expect_close(
        std::vector<float>(four.begin(), four.begin() + expected.size()),
        expected,
        1e-5f * largest);
  }
  pool->_unsafe_reset_threadpool(static_cast<uint32_t>(threads));
}
#endif

// The linears check the scales and zero points block by block as they read
// them: a bad entry in the first or the last output feature (past the
// GEMV's first panel, the GEMM's first panel pair, the portable loops'
// first row block, in the last, partial panel), or inside a panel (each
// GEMV panel checks its features' tables, its first feature's to its
// last's), fails the call on every loop kind, for one input row (GEMV)
// and five (GEMM).
TEST_P(QuantizedLinearTest, BadQuantizationParametersFailInEveryBlock) {
  // Groups of 16 to 64 values, with zero points and without; 8da4w's
  // groups of 128 (no zero points), with zero points, and of 256; a K that
  // is not a multiple of 64; 8-bit weights (whose zero points cannot be
  // out of range). 70 features: four full panels and a partial one.
  for (const Case& c : {Case{4, 70, 32, 16, true},
                        Case{4, 70, 256, 32, false},
                        Case{4, 70, 192, 64, true},
                        Case{4, 70, 256, 128, false},
                        Case{4, 70, 384, 128, true},
                        Case{4, 70, 512, 256, false},
                        Case{4, 70, 160, 32, true},
                        Case{8, 70, 192, 64, false}}) {
    const Weights w(c);
    const int64_t groups = c.rows * (c.cols / c.group);
    TestTensor wt(ScalarType::Byte, w.panel_sizes(c), w.panels);
    for (int64_t m : {1, 5}) {
      TestTensor xt(ScalarType::Float,
                    {static_cast<int32_t>(m), static_cast<int32_t>(c.cols)},
                    inputs(m * c.cols));
      TestTensor out(ScalarType::Float,
                     {static_cast<int32_t>(m), static_cast<int32_t>(c.rows)},
                     zeros(m * c.rows));
      const int64_t per_row = c.cols / c.group;
      for (int64_t at : {int64_t{0},
                         5 * per_row + per_row - 1,
                         66 * per_row + per_row / 2,
                         groups / 2 + 1,
                         groups - 1}) {
        // A scale (NaN, 0, < 0, infinite), or a zero point (above, below
        // the 4-bit range).
        for (int bad = 0; bad < (c.zero_points && c.bits == 4 ? 6 : 4); ++bad) {
          std::vector<float> scales = w.scales;
          std::vector<int8_t> zero_points = w.zero_points;
          const float bad_scales[] = {NAN, 0.f, -1.f, INFINITY};
          if (bad < 4) {
            scales[at] = bad_scales[bad];
          } else {
            zero_points[at] = bad == 4 ? 8 : -9;
          }
          TestTensor st(ScalarType::Float,
                        {static_cast<int32_t>(c.rows),
                         static_cast<int32_t>(c.cols / c.group)},
                        scales);
          TestTensor zt(ScalarType::Char,
                        {static_cast<int32_t>(c.rows),
                         static_cast<int32_t>(c.cols / c.group)},
                        zero_points);
          TempContext ctx;
          native::dynamic_int8_linear_panels_out(
              ctx.get(),
              xt,
              wt,
              st,
              c.zero_points ? std::optional<Tensor>(zt.tensor()) : std::nullopt,
              c.bits,
              c.group,
              std::nullopt,
              true,
              1e-6,
              -128,
              127,
              out);
          EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument)
              << "K " << c.cols << " rows " << m << " entry " << at << " bad "
              << bad;
        }
      }
    }
  }
}

TEST(QuantizedLinearArgsTest, BadArgumentsFail) {
  const Case c{4, 2, 32, 16, false};
  const Weights w(c);
  TestTensor xt(ScalarType::Float, {1, 32}, inputs(32));
  TestTensor wt(ScalarType::Byte, {2, 16}, w.packed);
  TestTensor st(ScalarType::Float, {2, 2}, w.scales);
  TestTensor out(ScalarType::Float, {1, 2}, zeros(2));
  {
    TempContext ctx; // group size that does not divide K
    native::weight_only_linear_out(
        ctx.get(), xt, wt, st, std::nullopt, 4, 12, std::nullopt, out);
    EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
  }
  {
    TempContext ctx; // 3 bits
    native::weight_only_linear_out(
        ctx.get(), xt, wt, st, std::nullopt, 3, 16, std::nullopt, out);
    EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
  }
  // Scales that are zero, negative, NaN or infinite; a zero point outside
  // the 4-bit range.
  for (float scale : {0.f, -0.5f, NAN, INFINITY}) {
    TempContext ctx;
    std::vector<float> scales = w.scales;
    scales[3] = scale;
    TestTensor bad(ScalarType::Float, {2, 2}, scales);
    native::weight_only_linear_out(
        ctx.get(), xt, wt, bad, std::nullopt, 4, 16, std::nullopt, out);
    EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument) << scale;
  }
  {
    TempContext ctx;
    TestTensor zps(ScalarType::Char, {2, 2}, std::vector<int8_t>{0, 0, 8, 0});
    native::weight_only_linear_out(ctx.get(),
                                   xt,
                                   wt,
                                   st,
                                   std::optional<Tensor>(zps.tensor()),
                                   4,
                                   16,
                                   std::nullopt,
                                   out);
    EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
  }
  {
    TempContext ctx; // weight of the wrong width for K = 32 at 8 bits
    native::dynamic_int8_linear_panels_out(ctx.get(),
                                           xt,
                                           wt,
                                           st,
                                           std::nullopt,
                                           8,
                                           16,
                                           std::nullopt,
                                           true,
                                           1e-6,
                                           -128,
                                           127,
                                           out);
    EXPECT_EQ(ctx.get().failure_state(), Error::InvalidArgument);
  }
}

// The activations' quantization loops against scalar references, at
// lengths around the vector widths and the VNNI loops' 64-value steps
// (each then has a tail): the minimum and maximum wherever they lie, NaN
// wherever it lies, and quantized values with ties at .5 (rounded to even),
// saturation at the range's limits (int8's and narrower ones) and zero
// points at the ends of the range.
const int64_t kLengths[] = {0, 1, 15, 16, 17, 63, 64, 65, 100, 129, 1001};

TEST_P(QuantizedLinearTest, FindMinMaxAnywhere) {
  for (int64_t n : kLengths) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 37) % 23) - 11.0f;
    }
    float lo = 0.f, hi = 0.f;
    ASSERT_TRUE(native::quantized::find_min_max(x.data(), n, &lo, &hi));
    if (n == 0) {
      EXPECT_EQ(lo, INFINITY);
      EXPECT_EQ(hi, -INFINITY);
      continue;
    }
    EXPECT_EQ(lo, *std::min_element(x.begin(), x.end())) << n;
    EXPECT_EQ(hi, *std::max_element(x.begin(), x.end())) << n;
    for (int64_t at = 0; at < n; at += (n > 200 ? 7 : 1)) {
      std::vector<float> y = x;
      y[at] = -1e30f;
      y[n - 1 - at] = 1e30f + (at == n - 1 - at ? -2e30f : 0.f);
      ASSERT_TRUE(native::quantized::find_min_max(y.data(), n, &lo, &hi));
      EXPECT_EQ(lo, *std::min_element(y.begin(), y.end())) << n << " " << at;
      EXPECT_EQ(hi, *std::max_element(y.begin(), y.end())) << n << " " << at;
      y[at] = NAN;
      EXPECT_FALSE(native::quantized::find_min_max(y.data(), n, &lo, &hi))
          << "NaN at " << at << " of " << n;
    }
  }
}

TEST_P(QuantizedLinearTest, QuantizeInt8RoundsHalfToEvenAndSaturates) {
  struct Params {
    float inverse_scale;
    int32_t zero_point, qmin, qmax;
  };
  for (const Params& p : {Params{1.0f, 0, -128, 127},
                          Params{2.0f, -128, -128, 127},
                          Params{0.5f, 127, -128, 127},
                          Params{4.0f, 3, -100, 50}}) {
    for (int64_t n : kLengths) {
      // Steps of 0.25 / inverse_scale: every other value a tie at .5, the
      // range reaching well past both limits.
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] =
            static_cast<float>((i * 53) % 1200 - 600) * 0.25f / p.inverse_scale;
      }
      std::vector<int8_t> q(n + 1, 99); // one past the end stays
      native::quantized::quantize_int8(
          x.data(), n, p.inverse_scale, p.zero_point, p.qmin, p.qmax, q.data());
      for (int64_t i = 0; i < n; ++i) {
        float v = std::nearbyint(x[i] * p.inverse_scale) +
                  static_cast<float>(p.zero_point);
        v = std::min(std::max(v, static_cast<float>(p.qmin)),
                     static_cast<float>(p.qmax));
        ASSERT_EQ(q[i], static_cast<int8_t>(v))
            << "x " << x[i] << " at " << i << " of " << n;
      }
      EXPECT_EQ(q[n], 99) << n;
    }
  }
  // Ties themselves: x * inverse_scale = k + 0.5 goes to the even k.
  const std::vector<float> ties = {
      0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -127.5f};
  std::vector<float> x;
  for (int r = 0; r < 9; ++r) { // 72 values: one VNNI step and a tail
    x.insert(x.end(), ties.begin(), ties.end());
  }
  std::vector<int8_t> q(x.size());
  native::quantized::quantize_int8(
      x.data(), x.size(), 1.0f, 0, -128, 127, q.data());
  const std::vector<int8_t> even = {0, 2, 2, 0, -2, -2, 126, -128};
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(q[i], even[i % even.size()]) << x[i];
  }
}

// The load-time check of a dynamic linear's fixed weight: uint8, of the
// panel layout's width for the K the scales cover (K = groups x group
// size, padded to whole words), and its scales valid.
TEST(QuantizedLinearArgsTest, LoadCheckOfPanelWeights) {
  using ::executorch::runtime::EValue;
  using ::executorch::runtime::Span;
  for (const Case& c : {Case{8, 5, 42, 14, false}, Case{4, 17, 20, 10, true}}) {
    const Weights w(c);
    TestTensor pt(ScalarType::Byte, w.panel_sizes(c), w.panels);
    TestTensor rows(ScalarType::Byte,
                    {static_cast<int32_t>(c.rows),
                     static_cast<int32_t>(c.bits == 4 ? c.cols / 2 : c.cols)},
                    w.packed);
    const int32_t groups = static_cast<int32_t>(c.cols / c.group);
    TestTensor st(
        ScalarType::Float, {static_cast<int32_t>(c.rows), groups}, w.scales);
    std::vector<float> bad_scales = w.scales;
    bad_scales.back() = 0.f;
    TestTensor bad(
        ScalarType::Float, {static_cast<int32_t>(c.rows), groups}, bad_scales);
    EValue input;
    EValue weight(pt.tensor());
    EValue scales(st.tensor());
    EValue none;
    EValue bits(static_cast<int64_t>(c.bits));
    EValue group(c.group);
    EValue* args[] = {&input, &weight, &scales, &none, &bits, &group};
    const bool fixed[] = {false, true, true, true, true, true};
    const Span<EValue* const> span(args, 6);
    EXPECT_TRUE(native::dynamic_int8_linear_panels_out_check(span, fixed));
    // The row layout's width (K / 2 or K) is not the panels' (K rounded up
    // to 8 / 2 or to 4).
    weight = EValue(rows.tensor());
    EXPECT_FALSE(native::dynamic_int8_linear_panels_out_check(span, fixed));
    // int8, the row layout's dtype for 8 bits.
    TestTensor signed_panels(ScalarType::Char,
                             w.panel_sizes(c),
                             std::vector<int8_t>(w.panels.size(), 0));
    weight = EValue(signed_panels.tensor());
    EXPECT_FALSE(native::dynamic_int8_linear_panels_out_check(span, fixed));
    weight = EValue(pt.tensor());
    scales = EValue(bad.tensor());
    EXPECT_FALSE(native::dynamic_int8_linear_panels_out_check(span, fixed));
  }
}

// The row-layout linear of earlier releases (et_quantized::dynamic_int8_linear)
// is refused whatever its arguments: by its load check, and by the kernel
// when a caller skips the load checks (it computes nothing).
TEST(QuantizedLinearArgsTest, RowLayoutLinearIsRefused) {
  using ::executorch::runtime::EValue;
  using ::executorch::runtime::Span;
  const Case c{8, 5, 42, 14, false};
  const Weights w(c);
  const int32_t rows = static_cast<int32_t>(c.rows);
  const int32_t cols = static_cast<int32_t>(c.cols);
  TestTensor wt(ScalarType::Byte, {rows, cols}, w.packed);
  TestTensor st(ScalarType::Float,
                {rows, static_cast<int32_t>(c.cols / c.group)},
                w.scales);
  TestTensor xt(ScalarType::Float, {1, cols}, zeros(c.cols));
  EValue input(xt.tensor());
  EValue weight(wt.tensor());
  EValue scales(st.tensor());
  EValue none;
  EValue bits(static_cast<int64_t>(c.bits));
  EValue group(c.group);
  EValue* args[] = {&input, &weight, &scales, &none, &bits, &group};
  const bool fixed[] = {false, true, true, true, true, true};
  EXPECT_FALSE(native::dynamic_int8_linear_out_check(
      Span<EValue* const>(args, 6), fixed));

  const std::vector<float> sentinel(c.rows, 7.0f);
  TestTensor out(ScalarType::Float, {1, rows}, sentinel);
  TempContext ctx;
  native::dynamic_int8_linear_out(ctx.get(),
                                  xt,
                                  wt,
                                  st,
                                  std::nullopt,
                                  c.bits,
                                  c.group,
                                  std::nullopt,
                                  true,
                                  1e-6,
                                  -128,
                                  127,
                                  out);
  EXPECT_EQ(ctx.get().failure_state(), Error::InvalidProgram);
  EXPECT_EQ(out.values<float>(), sentinel);
}
