// The quantize / dequantize / choose_qparams kernels against scalar
// references written out here: ties at .5 (to even), saturation at the
// quantized limits, per-channel axes other than 0, per-token and per-group
// layouts, empty tensors and bad parameters.

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>
#include <executorch/kernels/quantized/register_quantized_kernels.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;

namespace {

// Round half to even, written without the rounding mode.
double round_half_even(double v) {
  const double f = std::floor(v);
  const double diff = v - f;
  if (diff > 0.5) {
    return f + 1;
  }
  if (diff < 0.5) {
    return f;
  }
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

int32_t reference_quantize(float x,
                           float inv_scale,
                           int64_t zp,
                           int64_t lo,
                           int64_t hi,
                           bool zero_point_before_round) {
  const float scaled = x * inv_scale;
  const double v = zero_point_before_round
                       ? round_half_even(static_cast<double>(
                             scaled + static_cast<float>(zp)))
                       : round_half_even(scaled) + static_cast<double>(zp);
  return static_cast<int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

std::vector<float> ramp(size_t n, float step, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = start + step * static_cast<float>(i);
  }
  return v;
}

} // namespace

TEST(QuantizePerTensorTest, TiesRoundToEvenThenAddZeroPoint) {
  KernelRuntimeContext ctx;
  TestTensor x(
      ScalarType::Float,
      {8},
      std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 3.49f, -3.51f});
  TestTensor out(ScalarType::Char, {8}, zeros(8));
  native::quantize_per_tensor_out(
      ctx, x, 1.0, 1, -128, 127, ScalarType::Char, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(out.values<int32_t>(),
            (std::vector<int32_t>{1, 3, 3, 1, -1, -1, 4, -3}));
}

TEST(QuantizePerTensorTest, SaturatesAtTheLimitsOfEachDtype) {
  const std::vector<float> values{-1e6f, -1.f, 0.f, 1.f, 1e6f};
  struct Case {
    ScalarType dtype;
    int64_t lo, hi, zp;
  };
  for (const Case& c : {Case{ScalarType::Char, -128, 127, 0},
                        Case{ScalarType::Char, -127, 127, 0},
                        Case{ScalarType::Byte, 0, 255, 128},
                        Case{ScalarType::Short, -32768, 32767, 5}}) {
    KernelRuntimeContext ctx;
    TestTensor x(ScalarType::Float, {5}, values);
    TestTensor out(c.dtype, {5}, zeros(5));
    native::quantize_per_tensor_out(
        ctx, x, 0.05, c.zp, c.lo, c.hi, c.dtype, out);
    ASSERT_EQ(ctx.failure_state(), Error::Ok);
    const float inv = static_cast<float>(1.0 / 0.05);
    std::vector<int32_t> expected;
    for (float v : values) {
      expected.push_back(reference_quantize(v, inv, c.zp, c.lo, c.hi, false));
    }
    EXPECT_EQ(out.values<int32_t>(), expected);
    EXPECT_EQ(expected.front(), c.lo);
    EXPECT_EQ(expected.back(), c.hi);
  }
}

TEST(QuantizePerTensorTest, TensorOverloadReadsOneElementParams) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {4}, ramp(4, 0.3f, -0.5f));
  TestTensor scale(ScalarType::Double, {1}, std::vector<double>{0.1});
  TestTensor zp(ScalarType::Long, {1}, std::vector<int64_t>{-3});
  TestTensor out(ScalarType::Char, {4}, zeros(4));
  native::quantize_per_tensor_tensor_args_out(
      ctx, x, scale, zp, -128, 127, ScalarType::Char, out);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const float inv = static_cast<float>(1.0 / 0.1);
  std::vector<int32_t> expected;
  for (float v : ramp(4, 0.3f, -0.5f)) {
    expected.push_back(reference_quantize(v, inv, -3, -128, 127, false));
  }
  EXPECT_EQ(out.values<int32_t>(), expected);
}

TEST(QuantizePerChannelTest, AxisOneOfThreeDims) {
  KernelRuntimeContext ctx;
  const std::vector<float> xs = ramp(24, 0.37f, -4.0f);
  TestTensor x(ScalarType::Float, {2, 3, 4}, xs);
  const std::vector<float> scales{0.1f, 0.25f, 0.5f};
  const std::vector<int64_t> zps{0, 3, -2};
  TestTensor s(ScalarType::Float, {3}, scales);
  TestTensor z(ScalarType::Long, {3}, zps);
  TestTensor q(ScalarType::Char, {2, 3, 4}, zeros(24));
  native::quantize_per_channel_out(
      ctx, x, s, z, 1, -128, 127, ScalarType::Char, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  std::vector<int32_t> expected;
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t c = (i / 4) % 3;
    expected.push_back(
        reference_quantize(xs[i], 1.0f / scales[c], zps[c], -128, 127, false));
  }
  EXPECT_EQ(q.values<int32_t>(), expected);

  // And back: (q - zp) * scale per channel.
  TestTensor y(ScalarType::Float, {2, 3, 4}, zeros(24));
  native::dequantize_per_channel_out(ctx,
                                     q,
                                     s,
                                     std::optional<Tensor>(z.tensor()),
                                     -2,
                                     -128,
                                     127,
                                     ScalarType::Char,
                                     std::nullopt,
                                     y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> back = y.values<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t c = (i / 4) % 3;
    EXPECT_EQ(back[i], static_cast<float>(expected[i] - zps[c]) * scales[c])
        << "at " << i;
  }
}

TEST(QuantizePerTokenTest, ZeroPointIsAddedBeforeRounding) {
  KernelRuntimeContext ctx;
  // 0.5 with zero point 1: per token rounds 1.5 to 2; per tensor would
  // round 0.5 to 0 and then add 1.
  TestTensor x(
      ScalarType::Float, {2, 2}, std::vector<float>{0.5f, 2.5f, 1.0f, -300.f});
  TestTensor s(ScalarType::Double, {2, 1}, std::vector<double>{1.0, 0.5});
  TestTensor z(ScalarType::Long, {2, 1}, std::vector<int64_t>{1, 0});
  TestTensor q(ScalarType::Char, {2, 2}, zeros(4));
  native::quantize_per_token_out(ctx, x, s, z, -128, 127, ScalarType::Char, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(q.values<int32_t>(), (std::vector<int32_t>{2, 4, 2, -128}));

  TestTensor y(ScalarType::Float, {2, 2}, zeros(4));
  native::dequantize_per_token_out(
      ctx, q, s, z, -128, 127, ScalarType::Char, ScalarType::Float, y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(y.values<float>(), (std::vector<float>{1.f, 3.f, 1.f, -64.f}));
}

TEST(QuantizePerChannelGroupTest, GroupsOfTheLastDim) {
  KernelRuntimeContext ctx;
  const std::vector<float> xs = ramp(16, 0.21f, -1.7f);
  TestTensor x(ScalarType::Float, {2, 8}, xs);
  const std::vector<float> scales{0.05f, 0.1f, 0.2f, 0.4f};
  const std::vector<int64_t> zps{0, 1, -1, 2};
  TestTensor s(ScalarType::Float, {2, 2}, scales);
  TestTensor z(ScalarType::Long, {2, 2}, zps);
  TestTensor q(ScalarType::Char, {2, 8}, zeros(16));
  native::quantize_per_channel_group_out(
      ctx, x, s, z, -8, 7, ScalarType::Char, 4, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  std::vector<int32_t> expected;
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t g = i / 4;
    expected.push_back(
        reference_quantize(xs[i], 1.0f / scales[g], zps[g], -8, 7, true));
  }
  EXPECT_EQ(q.values<int32_t>(), expected);

  TestTensor y(ScalarType::Float, {2, 8}, zeros(16));
  native::dequantize_per_channel_group_out(ctx,
                                           q,
                                           s,
                                           std::optional<Tensor>(z.tensor()),
                                           -8,
                                           7,
                                           ScalarType::Char,
                                           4,
                                           ScalarType::Float,
                                           y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> back = y.values<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(back[i],
              static_cast<float>(expected[i] - zps[i / 4]) * scales[i / 4]);
  }
}

TEST(QuantizeTest, EmptyTensorsProduceEmptyResults) {
  KernelRuntimeContext ctx;
  TestTensor x(
      ScalarType::Float, {0, 4}, std::vector<float>{}, DYN::DYNAMIC_BOUND);
  TestTensor q(ScalarType::Char, {0, 4}, zeros(0), DYN::DYNAMIC_BOUND);
  native::quantize_per_tensor_out(
      ctx, x, 0.1, 0, -128, 127, ScalarType::Char, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(q.sizes(), (std::vector<int32_t>{0, 4}));
  TestTensor y(ScalarType::Float, {0, 4}, zeros(0), DYN::DYNAMIC_BOUND);
  native::dequantize_per_tensor_out(
      ctx, q, 0.1, 0, -128, 127, ScalarType::Char, std::nullopt, y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{0, 4}));

  TestTensor scale(ScalarType::Double, {1}, std::vector<double>{0});
  TestTensor zp(ScalarType::Long, {1}, std::vector<int64_t>{7});
  native::choose_qparams_tensor_out(
      ctx, x, -128, 127, 1e-5, ScalarType::Char, scale, zp);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(scale.values<double>()[0], 1.0);
  EXPECT_EQ(zp.values<int64_t>()[0], 0);
}

// The per-channel, per-token and per-group layouts with no rows: empty
// results, parameters still checked against the channel count.
TEST(QuantizeTest, EmptyTensorsOfEachLayoutProduceEmptyResults) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float, {0, 8}, std::vector<float>{});
  TestTensor q(ScalarType::Char, {0, 8}, zeros(0));
  TestTensor y(ScalarType::Float, {0, 8}, zeros(0));
  // Per channel along the non-empty axis 1: eight scales.
  TestTensor s8(ScalarType::Float, {8}, std::vector<float>(8, 0.5f));
  TestTensor z8(ScalarType::Long, {8}, std::vector<int64_t>(8, 1));
  native::quantize_per_channel_out(
      ctx, x, s8, z8, 1, -128, 127, ScalarType::Char, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  native::dequantize_per_channel_out(ctx,
                                     q,
                                     s8,
                                     std::optional<Tensor>(z8.tensor()),
                                     1,
                                     -128,
                                     127,
                                     ScalarType::Char,
                                     std::nullopt,
                                     y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  // Per token and per group: no rows, so no parameters.
  TestTensor s0(ScalarType::Double, {0, 1}, std::vector<double>{});
  TestTensor z0(ScalarType::Long, {0, 1}, std::vector<int64_t>{});
  native::choose_qparams_per_token_asymmetric_out(
      ctx, x, ScalarType::Char, s0, z0);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  native::quantize_per_token_out(
      ctx, x, s0, z0, -128, 127, ScalarType::Char, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  native::dequantize_per_token_out(
      ctx, q, s0, z0, -128, 127, ScalarType::Char, ScalarType::Float, y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  TestTensor sg(ScalarType::Float, {0, 2}, std::vector<float>{});
  TestTensor zg(ScalarType::Long, {0, 2}, std::vector<int64_t>{});
  native::quantize_per_channel_group_out(
      ctx, x, sg, zg, -8, 7, ScalarType::Char, 4, q);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  native::dequantize_per_channel_group_out(ctx,
                                           q,
                                           sg,
                                           std::optional<Tensor>(zg.tensor()),
                                           -8,
                                           7,
                                           ScalarType::Char,
                                           4,
                                           ScalarType::Float,
                                           y);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(q.sizes(), (std::vector<int32_t>{0, 8}));
  EXPECT_EQ(y.sizes(), (std::vector<int32_t>{0, 8}));
}

TEST(QuantizeTest, BadParametersFailNamingTheProblem) {
  TestTensor x(ScalarType::Float, {4}, ramp(4, 1.f, 0.f));
  TestTensor q(ScalarType::Char, {4}, zeros(4));
  for (double scale : {0.0,
                       -1.0,
                       std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
    KernelRuntimeContext ctx;
    native::quantize_per_tensor_out(
        ctx, x, scale, 0, -128, 127, ScalarType::Char, q);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument) << scale;
  }
  {
    KernelRuntimeContext ctx; // zero point out of range
    native::quantize_per_tensor_out(
        ctx, x, 0.1, 200, -128, 127, ScalarType::Char, q);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
  {
    KernelRuntimeContext ctx; // quant range wider than the dtype
    native::quantize_per_tensor_out(
        ctx, x, 0.1, 0, -300, 127, ScalarType::Char, q);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
  {
    KernelRuntimeContext ctx; // one channel's scale is zero
    TestTensor x2(ScalarType::Float, {2, 2}, ramp(4, 1.f, 0.f));
    TestTensor s(ScalarType::Float, {2}, std::vector<float>{0.1f, 0.f});
    TestTensor z(ScalarType::Long, {2}, std::vector<int64_t>{0, 0});
    TestTensor q2(ScalarType::Char, {2, 2}, zeros(4));
    native::quantize_per_channel_out(
        ctx, x2, s, z, 0, -128, 127, ScalarType::Char, q2);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
  {
    KernelRuntimeContext ctx; // group size 3 does not divide 8
    TestTensor x2(ScalarType::Float, {1, 8}, ramp(8, 1.f, 0.f));
    TestTensor s(ScalarType::Float, {1, 2}, std::vector<float>{0.1f, 0.1f});
    TestTensor z(ScalarType::Long, {1, 2}, std::vector<int64_t>{0, 0});
    TestTensor q2(ScalarType::Char, {1, 8}, zeros(8));
    native::quantize_per_channel_group_out(
        ctx, x2, s, z, -8, 7, ScalarType::Char, 3, q2);
    EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
  }
}

TEST(ChooseQParamsTest, PerTensorMatchesTheReferenceFormula) {
  KernelRuntimeContext ctx;
  const std::vector<float> xs{-0.7f, 0.1f, 2.3f, 1.1f};
  TestTensor x(ScalarType::Float, {4}, xs);
  TestTensor scale(ScalarType::Double, {1}, std::vector<double>{0});
  TestTensor zp(ScalarType::Long, {1}, std::vector<int64_t>{0});
  native::choose_qparams_tensor_out(
      ctx, x, -128, 127, 1.0 / 4096, ScalarType::Char, scale, zp);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const float s = (2.3f - -0.7f) / 255.f;
  EXPECT_EQ(scale.values<double>()[0], static_cast<double>(s));
  EXPECT_EQ(zp.values<int64_t>()[0],
            -128 - static_cast<int64_t>(round_half_even(-0.7f / s)));

  // An all-zero input takes the smallest scale, eps.
  TestTensor zeros4(ScalarType::Float, {4}, zeros(4));
  native::choose_qparams_tensor_out(
      ctx, zeros4, -128, 127, 1.0 / 4096, ScalarType::Char, scale, zp);
  EXPECT_EQ(scale.values<double>()[0], 1.0 / 4096);
  EXPECT_EQ(zp.values<int64_t>()[0], -128);
}

TEST(ChooseQParamsTest, PerTokenAsymmetricPicksTheBetterZeroPoint) {
  KernelRuntimeContext ctx;
  TestTensor x(ScalarType::Float,
               {2, 3},
               std::vector<float>{-1.f, 0.5f, 3.f, 2.f, 4.f, 1.f});
  TestTensor scale(ScalarType::Double, {2, 1}, std::vector<double>{0, 0});
  TestTensor zp(ScalarType::Long, {2, 1}, std::vector<int64_t>{0, 0});
  native::choose_qparams_per_token_asymmetric_out(
      ctx, x, ScalarType::Char, scale, zp);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  // Row 0: range [-1, 3]; row 1: [0, 4] (widened to include 0).
  const float s0 = 4.f / 255.f, s1 = 4.f / 255.f;
  EXPECT_EQ(
      scale.values<double>(),
      (std::vector<double>{static_cast<double>(s0), static_cast<double>(s1)}));
  const float from_min0 = -128.f + (-1.f / s0), from_max0 = 127.f + 3.f / s0;
  const float zp0 =
      from_min0 + from_max0 > 0 ? -128.f - (-1.f / s0) : 127.f - 3.f / s0;
  EXPECT_EQ(zp.values<int64_t>()[0],
            static_cast<int64_t>(round_half_even(zp0)));
  EXPECT_EQ(zp.values<int64_t>()[1], -128);
}

// The load-time checks (quantized.yaml's load_check) refuse the bad
// parameters a program fixes, as the kernels do at each call, and leave
// the parameters set at run time to the kernels.
TEST(QuantizedLoadCheckTest, PerTensorParametersWhenFixed) {
  using ::executorch::runtime::EValue;
  using ::executorch::runtime::Span;
  EValue input;
  EValue scale(0.0);
  EValue zero_point(int64_t(0));
  EValue quant_min(int64_t(-128));
  EValue quant_max(int64_t(127));
  EValue dtype(static_cast<int64_t>(ScalarType::Char));
  EValue* args[] = {&input, &scale, &zero_point, &quant_min, &quant_max, &dtype};
  bool fixed[] = {false, true, true, true, true, true};
  const Span<EValue* const> span(args, 6);
  EXPECT_FALSE(native::quantize_per_tensor_out_check(span, fixed));
  EXPECT_FALSE(native::dequantize_per_tensor_out_check(span, fixed));
  fixed[1] = false; // a scale computed at run time
  EXPECT_TRUE(native::quantize_per_tensor_out_check(span, fixed));
  fixed[1] = true;
  scale = EValue(0.5);
  EXPECT_TRUE(native::quantize_per_tensor_out_check(span, fixed));
  zero_point = EValue(int64_t(200));
  EXPECT_FALSE(native::quantize_per_tensor_out_check(span, fixed));
  zero_point = EValue(int64_t(0));
  quant_min = EValue(int64_t(-300));
  EXPECT_FALSE(native::quantize_per_tensor_out_check(span, fixed));
  // The .Tensor_out overloads read one-element tensors.
  TestTensor scale_t(ScalarType::Double, {1}, std::vector<double>{
      std::numeric_limits<double>::quiet_NaN()});
  TestTensor zp_t(ScalarType::Long, {1}, std::vector<int64_t>{0});
  EValue scale_v(static_cast<Tensor&>(scale_t));
  EValue zp_v(static_cast<Tensor&>(zp_t));
  quant_min = EValue(int64_t(-128));
  EValue* tensor_args[] = {
      &input, &scale_v, &zp_v, &quant_min, &quant_max, &dtype};
  EXPECT_FALSE(native::quantize_per_tensor_tensor_args_out_check(
      Span<EValue* const>(tensor_args, 6), fixed));
}

TEST(QuantizedLoadCheckTest, PerChannelTablesWhenFixed) {
  using ::executorch::runtime::EValue;
  using ::executorch::runtime::Span;
  TestTensor weight(ScalarType::Char, {3, 2}, zeros(6));
  TestTensor scales(ScalarType::Float, {3}, std::vector<float>{0.1f, 0.2f, 0.3f});
  TestTensor zps(ScalarType::Long, {3}, std::vector<int64_t>{0, 0, 0});
  EValue input(static_cast<Tensor&>(weight));
  EValue scales_v(static_cast<Tensor&>(scales));
  EValue zps_v(static_cast<Tensor&>(zps));
  EValue axis(int64_t(0));
  EValue quant_min(int64_t(-127));
  EValue quant_max(int64_t(127));
  EValue dtype(static_cast<int64_t>(ScalarType::Char));
  EValue* args[] = {
      &input, &scales_v, &zps_v, &axis, &quant_min, &quant_max, &dtype};
  const Span<EValue* const> span(args, 7);
  bool fixed[] = {true, true, true, true, true, true, true};
  EXPECT_TRUE(native::dequantize_per_channel_out_check(span, fixed));
  // Three scales for the two entries along axis 1 of a fixed input.
  axis = EValue(int64_t(1));
  EXPECT_FALSE(native::dequantize_per_channel_out_check(span, fixed));
  // An input set at run time: its sizes are not checked at load.
  fixed[0] = false;
  EXPECT_TRUE(native::quantize_per_channel_out_check(span, fixed));
  scales.tensor().mutable_data_ptr<float>()[2] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(native::quantize_per_channel_out_check(span, fixed));
  scales.tensor().mutable_data_ptr<float>()[2] = 0.3f;
  zps.tensor().mutable_data_ptr<int64_t>()[1] = -128;
  EXPECT_FALSE(native::quantize_per_channel_out_check(span, fixed));
}

TEST(QuantizedRegistrationTest, RegistersEveryOperatorOnce) {
  ASSERT_EQ(::executorch::kernels::register_quantized_kernels(), Error::Ok);
  const size_t count = ::executorch::runtime::get_registered_kernels().size();
  ASSERT_EQ(::executorch::kernels::register_quantized_kernels(), Error::Ok);
  EXPECT_EQ(::executorch::runtime::get_registered_kernels().size(), count);
  for (const char* name : {"quantized_decomposed::quantize_per_tensor.out",
                           "quantized_decomposed::dequantize_per_channel.out",
                           "quantized_decomposed::choose_qparams.Tensor_out",
                           "quantized_decomposed::embedding_4bit.dtype_out"}) {
    EXPECT_TRUE(::executorch::runtime::registry_has_op_function(name)) << name;
  }
}
