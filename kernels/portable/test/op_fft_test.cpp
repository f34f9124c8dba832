// FFT kernels and the complex dtypes they produce: results against a
// direct O(n^2) DFT, round trips, layouts, and bad arguments.

#include <cmath>
#include <complex>

#include <gtest/gtest.h>

#include <NativeFunctions.h>
#include <executorch/kernels/portable/test/test_tensor.h>

using namespace torch::executor::testing;
namespace native = torch::executor::native;
using ::executorch::aten::IntArrayRef;
using cfloat = std::complex<float>;

namespace {

constexpr double kPi = 3.14159265358979323846;

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = std::sin(0.7f * static_cast<float>(i)) + 0.1f * i;
  }
  return v;
}

// A complex tensor of `sizes` holding `values` (TestTensor converts only
// real values, so the data is written directly).
void fill_complex(TestTensor& t, const std::vector<cfloat>& values) {
  auto* data = static_cast<cfloat*>(t.tensor().mutable_data_ptr());
  std::copy(values.begin(), values.end(), data);
}

std::vector<cfloat> complex_values(TestTensor& t) {
  const auto* data = static_cast<const cfloat*>(t.tensor().const_data_ptr());
  return std::vector<cfloat>(data, data + t.tensor().numel());
}

// X[k] = sum_j x[j] exp(-2 pi i jk / n), straight from the definition.
std::vector<std::complex<double>> direct_dft(const float* x, int64_t n) {
  std::vector<std::complex<double>> result(n);
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t j = 0; j < n; ++j) {
      result[k] +=
          static_cast<double>(x[j]) *
          std::polar(1.0, -2 * kPi * static_cast<double>(j * k % n) / n);
    }
  }
  return result;
}

// rfft over the last dim of a [2, n] signal, scaled by 1/n, against the
// direct DFT.
void expect_rfft_matches_direct_dft(int64_t n) {
  SCOPED_TRACE(n);
  TempContext context;
  const std::vector<float> x = ramp(2 * n);
  TestTensor self(ScalarType::Float, {2, static_cast<int32_t>(n)}, x);
  TestTensor out(ScalarType::ComplexFloat,
                 {2, static_cast<int32_t>(n / 2 + 1)},
                 std::vector<float>{});
  const int64_t dim[] = {1};
  native::_fft_r2c_out(context.get(), self, IntArrayRef(dim), 2, true, out);
  ASSERT_EQ(context.get().failure_state(), Error::Ok);
  const std::vector<cfloat> got = complex_values(out);
  for (int64_t row = 0; row < 2; ++row) {
    const auto expected = direct_dft(x.data() + row * n, n);
    for (int64_t k = 0; k <= n / 2; ++k) {
      const cfloat value = got[row * (n / 2 + 1) + k];
      EXPECT_NEAR(value.real(), expected[k].real() / n, 1e-5) << "k=" << k;
      EXPECT_NEAR(value.imag(), expected[k].imag() / n, 1e-5) << "k=" << k;
    }
  }
}

} // namespace

TEST(OpFftTest, RfftMatchesDirectDftAtPowerOfTwoAndOtherLengths) {
  for (int64_t n : {1, 2, 8, 64, 3, 12, 17, 100}) {
    expect_rfft_matches_direct_dft(n);
  }
}

TEST(OpFftTest, IrfftInvertsRfftAtOddLength) {
  const std::vector<float> x = ramp(9);
  TestTensor self(ScalarType::Float, {9}, x);
  TestTensor spectrum(ScalarType::ComplexFloat, {5}, std::vector<float>{});
  TestTensor back(ScalarType::Float, {9}, zeros(9));
  const int64_t dim[] = {0};
  TempContext forward;
  native::_fft_r2c_out(
      forward.get(), self, IntArrayRef(dim), 0, true, spectrum);
  ASSERT_EQ(forward.get().failure_state(), Error::Ok);
  TempContext inverse;
  native::_fft_c2r_out(inverse.get(), spectrum, IntArrayRef(dim), 2, 9, back);
  ASSERT_EQ(inverse.get().failure_state(), Error::Ok);
  const std::vector<float> got = back.values<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(got[i], x[i], 1e-5) << "i=" << i;
  }
}

TEST(OpFftTest, C2cForwardThenInverseOverTwoDimsRoundTrips) {
  std::vector<cfloat> values;
  for (int i = 0; i < 15; ++i) {
    values.emplace_back(std::cos(0.3f * i), 0.2f * i);
  }
  TestTensor self(ScalarType::ComplexFloat, {3, 5}, std::vector<float>{});
  fill_complex(self, values);
  TestTensor spectrum(ScalarType::ComplexFloat, {3, 5}, std::vector<float>{});
  TestTensor back(ScalarType::ComplexFloat, {3, 5}, std::vector<float>{});
  const int64_t dims[] = {0, -1};
  TempContext forward;
  native::_fft_c2c_out(
      forward.get(), self, IntArrayRef(dims), 1, true, spectrum);
  TempContext inverse;
  native::_fft_c2c_out(
      inverse.get(), spectrum, IntArrayRef(dims), 1, false, back);
  ASSERT_EQ(forward.get().failure_state(), Error::Ok);
  ASSERT_EQ(inverse.get().failure_state(), Error::Ok);
  // The DC term of the orthonormal transform is sum(x) / sqrt(15).
  cfloat sum = 0;
  for (const cfloat& v : values) {
    sum += v;
  }
  EXPECT_NEAR(
      std::abs(complex_values(spectrum)[0] - sum / std::sqrt(15.0f)), 0, 1e-5);
  const std::vector<cfloat> got = complex_values(back);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(std::abs(got[i] - values[i]), 0, 1e-5) << "i=" << i;
  }
}

TEST(OpFftTest, WritesChannelsLastOutAndSkipsEmptyBatch) {
  // Out [1, 2, 2, 2] in dim order (0, 2, 3, 1): element (0, c, h, w) sits
  // at memory index (h * 2 + w) * 2 + c.
  TempContext context;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  TestTensor self(ScalarType::Float, {1, 2, 2, 2}, x);
  TestTensor out(ScalarType::ComplexFloat,
                 {1, 2, 2, 2},
                 std::vector<float>{},
                 DYN::STATIC,
                 {0, 2, 3, 1});
  const int64_t dim[] = {3};
  native::_fft_r2c_out(context.get(), self, IntArrayRef(dim), 0, false, out);
  ASSERT_EQ(context.get().failure_state(), Error::Ok);
  const std::vector<cfloat> got = complex_values(out);
  // Along w: [a, b] -> [a + b, a - b].
  for (int c = 0; c < 2; ++c) {
    for (int h = 0; h < 2; ++h) {
      const float a = x[c * 4 + h * 2];
      const float b = x[c * 4 + h * 2 + 1];
      EXPECT_EQ(got[(h * 2 + 0) * 2 + c], cfloat(a + b, 0));
      EXPECT_EQ(got[(h * 2 + 1) * 2 + c], cfloat(a - b, 0));
    }
  }

  TestTensor empty(ScalarType::Float, {0, 8}, zeros(0));
  TestTensor empty_out(ScalarType::ComplexFloat, {0, 5}, std::vector<float>{});
  const int64_t last[] = {1};
  native::_fft_r2c_out(
      context.get(), empty, IntArrayRef(last), 0, true, empty_out);
  EXPECT_EQ(context.get().failure_state(), Error::Ok);
}

TEST(OpFftTest, BadArgumentsFailTheContext) {
  TestTensor self(ScalarType::Float, {2, 4}, ramp(8));
  TestTensor out(ScalarType::ComplexFloat, {2, 3}, std::vector<float>{});
  const int64_t dim[] = {1};
  const auto r2c_fails = [&](IntArrayRef dims, int64_t norm, Tensor& o) {
    TempContext context;
    native::_fft_r2c_out(context.get(), self, dims, norm, true, o);
    return context.get().failure_state() == Error::InvalidArgument;
  };
  const int64_t twice[] = {1, -1};
  const int64_t outside[] = {2};
  EXPECT_TRUE(r2c_fails(IntArrayRef(twice, 2), 0, out));
  EXPECT_TRUE(r2c_fails(IntArrayRef(outside), 0, out));
  EXPECT_TRUE(r2c_fails(IntArrayRef(), 0, out));
  EXPECT_TRUE(r2c_fails(IntArrayRef(dim), 3, out));
  TestTensor real_out(ScalarType::Float, {2, 3}, zeros(6));
  EXPECT_TRUE(r2c_fails(IntArrayRef(dim), 0, real_out));

  // Without temp memory the kernel reports it rather than crashing.
  KernelRuntimeContext no_temp;
  native::_fft_r2c_out(no_temp, self, IntArrayRef(dim), 0, true, out);
  EXPECT_EQ(no_temp.failure_state(), Error::InvalidArgument);

  // c2r needs n / 2 + 1 (or n) coefficients along the last dim.
  TestTensor spectrum(ScalarType::ComplexFloat, {2, 4}, std::vector<float>{});
  TestTensor signal(ScalarType::Float, {2, 8}, zeros(16));
  TempContext c2r;
  native::_fft_c2r_out(c2r.get(), spectrum, IntArrayRef(dim), 0, 8, signal);
  EXPECT_EQ(c2r.get().failure_state(), Error::InvalidArgument);

  // A signal dim of size 0 has no transform.
  TestTensor empty_signal(ScalarType::Float, {2, 0}, zeros(0));
  TempContext empty;
  native::_fft_r2c_out(
      empty.get(), empty_signal, IntArrayRef(dim), 0, true, out);
  EXPECT_EQ(empty.get().failure_state(), Error::InvalidArgument);
}

TEST(OpComplexTest, AbsGivesMagnitudeAndViewsCopyWholeElements) {
  KernelRuntimeContext ctx;
  TestTensor z(ScalarType::ComplexFloat, {2, 3}, std::vector<float>{});
  fill_complex(z, {{3, 4}, {0, -2}, {-5, 0}, {1, 1}, {0, 0}, {-6, 8}});
  TestTensor magnitude(ScalarType::Float, {2, 3}, zeros(6));
  native::abs_out(ctx, z, magnitude);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  const std::vector<float> got = magnitude.values<float>();
  const float expected[] = {5, 2, 5, std::sqrt(2.0f), 0, 10};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(got[i], expected[i]) << "i=" << i;
  }

  TestTensor transposed(ScalarType::ComplexFloat, {3, 2}, std::vector<float>{});
  const int64_t dims[] = {1, 0};
  native::permute_copy_out(ctx, z, IntArrayRef(dims), transposed);
  ASSERT_EQ(ctx.failure_state(), Error::Ok);
  EXPECT_EQ(
      complex_values(transposed),
      (std::vector<cfloat>{{3, 4}, {1, 1}, {0, -2}, {0, 0}, {-5, 0}, {-6, 8}}));

  // Complex never converts to a real dtype in a copy.
  TestTensor real(ScalarType::Float, {3, 2}, zeros(6));
  native::permute_copy_out(ctx, z, IntArrayRef(dims), real);
  EXPECT_EQ(ctx.failure_state(), Error::InvalidArgument);
}
