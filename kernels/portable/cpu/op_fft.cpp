// Discrete Fourier transforms over a set of dims: _fft_r2c (real in,
// complex out), _fft_c2r (Hermitian-symmetric complex in, real out) and
// _fft_c2c. The signal is staged in complex<double> temp memory and
// transformed one dim at a time, lane by lane: iterative radix-2 for
// power-of-two lengths, Bluestein's chirp-z (a power-of-two circular
// convolution) for the others, so every length costs O(n log n).

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <complex>
#include <type_traits>
#include <utility>

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/portable/util/reduce.h>

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::runtime::toString;
using cdouble = std::complex<double>;

constexpr double kPi = 3.14159265358979323846;

bool is_pow2(int64_t n) {
  return (n & (n - 1)) == 0;
}

int64_t next_pow2(int64_t n) {
  int64_t m = 1;
  while (m < n) {
    m <<= 1;
  }
  return m;
}

// The power-of-two length a transform of length n runs at.
int64_t padded_length(int64_t n) {
  return is_pow2(n) ? n : next_pow2(2 * n - 1);
}

// In-place forward DFT of power-of-two length n; tw[k] = exp(-2 pi i k / n)
// for k < n / 2.
void radix2(cdouble* a, int64_t n, const cdouble* tw) {
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) {
      j ^= bit;
    }
    j ^= bit;
    if (i < j) {
      std::swap(a[i], a[j]);
    }
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t half = len / 2;
    const int64_t step = n / len;
    for (int64_t start = 0; start < n; start += len) {
      for (int64_t k = 0; k < half; ++k) {
        const cdouble t = a[start + k + half] * tw[k * step];
        a[start + k + half] = a[start + k] - t;
        a[start + k] += t;
      }
    }
  }
}

// Scratch for transforms of lanes up to `max_length` long: carved out of
// one temp allocation sized for the longest dim.
struct Scratch {
  cdouble* lane;     // max_length: the lane being transformed, made contiguous
  cdouble* twiddles; // max_padded / 2
  cdouble* chirp;    // max_length (Bluestein)
  cdouble* chirp_spectrum; // max_padded (Bluestein)
  cdouble* work;           // max_padded (Bluestein)

  static size_t count(int64_t max_length, int64_t max_padded) {
    return static_cast<size_t>(2 * max_length + max_padded / 2 +
                               2 * max_padded);
  }
  explicit Scratch(cdouble* base, int64_t max_length, int64_t max_padded)
      : lane(base),
        twiddles(lane + max_length),
        chirp(twiddles + max_padded / 2),
        chirp_spectrum(chirp + max_length),
        work(chirp_spectrum + max_padded) {}
};

// Forward or inverse (unnormalized) DFT of one length, applied to lanes.
class LaneTransform {
 public:
  LaneTransform(int64_t n, const Scratch& s)
      : n_(n), m_(padded_length(n)), s_(s) {
    for (int64_t k = 0; k < m_ / 2; ++k) {
      s_.twiddles[k] = std::polar(1.0, -2 * kPi * k / m_);
    }
    if (is_pow2(n_)) {
      return;
    }
    // chirp[k] = exp(-pi i k^2 / n); k^2 is taken mod 2n so the angle stays
    // small and exact for long lanes.
    for (int64_t k = 0; k < n_; ++k) {
      const int64_t k2 = (k * k) % (2 * n_);
      s_.chirp[k] = std::polar(1.0, -kPi * k2 / n_);
    }
    cdouble* b = s_.chirp_spectrum;
    std::fill(b, b + m_, cdouble(0));
    b[0] = std::conj(s_.chirp[0]);
    for (int64_t k = 1; k < n_; ++k) {
      b[k] = b[m_ - k] = std::conj(s_.chirp[k]);
    }
    radix2(b, m_, s_.twiddles);
  }

  // Transforms s.lane in place; the inverse is conj(DFT(conj(x))).
  void run(bool inverse) const {
    cdouble* x = s_.lane;
    if (inverse) {
      conjugate(x, n_);
    }
    if (is_pow2(n_)) {
      radix2(x, n_, s_.twiddles);
    } else {
      bluestein(x);
    }
    if (inverse) {
      conjugate(x, n_);
    }
  }

 private:
  static void conjugate(cdouble* x, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      x[k] = std::conj(x[k]);
    }
  }

  // X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]): a circular
  // convolution of length m, done as products of spectra.
  void bluestein(cdouble* x) const {
    cdouble* a = s_.work;
    for (int64_t k = 0; k < n_; ++k) {
      a[k] = x[k] * s_.chirp[k];
    }
    std::fill(a + n_, a + m_, cdouble(0));
    radix2(a, m_, s_.twiddles);
    for (int64_t k = 0; k < m_; ++k) {
      a[k] = std::conj(a[k] * s_.chirp_spectrum[k]);
    }
    radix2(a, m_, s_.twiddles);
    const double inv_m = 1.0 / static_cast<double>(m_);
    for (int64_t k = 0; k < n_; ++k) {
      x[k] = s_.chirp[k] * std::conj(a[k]) * inv_m;
    }
  }

  int64_t n_;
  int64_t m_;
  const Scratch& s_;
};

template <typename T>
struct is_complex : std::false_type {};
template <typename R>
struct is_complex<std::complex<R>> : std::true_type {};

template <typename T>
cdouble to_cdouble(T x) {
  if constexpr (is_complex<T>::value) {
    return cdouble(x.real(), x.imag());
  } else {
    return cdouble(static_cast<double>(x), 0.0);
  }
}

// The element of dtype T that `v` is written as: complex, or its real part.
template <typename T>
T from_cdouble(cdouble v) {
  if constexpr (is_complex<T>::value) {
    using R = typename T::value_type;
    return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else {
    return static_cast<T>(v.real());
  }
}

// Runs fn(float()) or fn(double()) for the precision of `t`, real or
// complex (the callers have checked `t`).
template <typename Fn>
void with_precision(ScalarType t, Fn fn) {
  if (t == ScalarType::Double || t == ScalarType::ComplexDouble) {
    fn(double());
  } else {
    fn(float());
  }
}

// Checked arguments and the temp memory of one transform.
struct FftPlan {
  int64_t dims[kMaxDims];
  size_t ndim = 0;
  double scale = 1.0;
  // Staging area: one element per element of self, then `extra` more.
  cdouble* signal = nullptr;
};

// Checks dims (non-empty, distinct, in range, non-empty signal) and the
// normalization mode, computes the scale and allocates temp memory: the
// staging area and scratch for the dims' lengths. `last_length`, when
// positive, replaces the last dim's signal length.
bool plan_fft(KernelRuntimeContext& ctx,
              const char* op,
              const Tensor& self,
              IntArrayRef dims,
              int64_t normalization,
              int64_t last_length,
              size_t extra,
              FftPlan* plan,
              Scratch* scratch) {
  if (self.dim() == 0) {
    fail_arg(ctx, op, "self: expected at least 1 dim, got a 0-dim tensor");
    return false;
  }
  if (dims.empty() || dims.size() > kMaxDims) {
    fail_arg(
        ctx, op, "dim: expected 1 to %zu dims, got %zu", kMaxDims, dims.size());
    return false;
  }
  if (normalization < 0 || normalization > 2) {
    fail_arg(ctx,
             op,
             "normalization: expected 0 (none), 1 (by sqrt(n)) or 2 (by n), "
             "got %" PRId64,
             normalization);
    return false;
  }
  int64_t signal_numel = 1;
  int64_t max_length = 1;
  int64_t max_padded = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = 0;
    if (!normalize_dim(ctx, op, dims[i], self.dim(), &d)) {
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (plan->dims[j] == d) {
        fail_arg(ctx, op, "dim: dim %" PRId64 " appears twice", d);
        return false;
      }
    }
    plan->dims[plan->ndim++] = d;
    const int64_t length =
        (i + 1 == dims.size() && last_length > 0) ? last_length : self.size(d);
    if (length < 1) {
      fail_arg(ctx,
               op,
               "dim %" PRId64 ": invalid number of data points (%" PRId64 ")",
               d,
               length);
      return false;
    }
    signal_numel *= length;
    max_length = std::max(max_length, length);
    max_padded = std::max(max_padded, padded_length(length));
  }
  if (normalization == 1) {
    plan->scale = 1.0 / std::sqrt(static_cast<double>(signal_numel));
  } else if (normalization == 2) {
    plan->scale = 1.0 / static_cast<double>(signal_numel);
  }
  const size_t staged = static_cast<size_t>(self.numel()) + extra;
  const size_t count = staged + Scratch::count(max_length, max_padded);
  auto temp = ctx.allocate_temp(count * sizeof(cdouble), alignof(cdouble));
  if (!temp.ok()) {
    fail_arg(
        ctx, op, "needs %zu bytes of temp memory", count * sizeof(cdouble));
    return false;
  }
  plan->signal = static_cast<cdouble*>(*temp);
  *scratch = Scratch(plan->signal + staged, max_length, max_padded);
  return true;
}

// Writes the contiguous `signal` of shape `signal_shape`, scaled, into out
// (any dim order), whose sizes may be smaller (onesided r2c).
template <typename T>
void write_out(const cdouble* signal,
               const Shape& signal_shape,
               double scale,
               const Tensor& out) {
  T* result = static_cast<T*>(out.mutable_data_ptr());
  const View to = tensor_view(out);
  const View dense = reshape_view(signal_shape);
  for_each_index(
      to.shape, to.strides, dense.strides, [&](int64_t a, int64_t b) {
        result[a] = from_cdouble<T>(signal[b] * scale);
      });
}

// Transforms the staged signal (shape `sizes`) along `dim`, lane by lane.
void transform_dim(cdouble* signal,
                   ArrayRef<SizesType> sizes,
                   int64_t dim,
                   bool inverse,
                   const Scratch& scratch) {
  const LaneTransform transform(sizes[dim], scratch);
  for_each_lane(sizes, dim, [&](int64_t base, int64_t stride, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      scratch.lane[k] = signal[base + k * stride];
    }
    transform.run(inverse);
    for (int64_t k = 0; k < n; ++k) {
      signal[base + k * stride] = scratch.lane[k];
    }
  });
}

// Copies self (elements of type T, any dim order) into the plan's signal,
// contiguous, as complex, and transforms it along the first `count`
// planned dims.
template <typename T>
void stage_and_transform(const Tensor& self,
                         const FftPlan& plan,
                         size_t count,
                         bool inverse,
                         const Scratch& scratch) {
  cdouble* signal = plan.signal;
  const T* in = static_cast<const T*>(self.const_data_ptr());
  const View from = tensor_view(self);
  const View dense = reshape_view(from.shape);
  for_each_index(
      from.shape, from.strides, dense.strides, [&](int64_t a, int64_t b) {
        signal[b] = to_cdouble(in[a]);
      });
  for (size_t i = 0; i < count; ++i) {
    transform_dim(signal, self.sizes(), plan.dims[i], inverse, scratch);
  }
}

// Float or Double, or their complex counterparts.
ScalarType fft_dtype(bool complex, bool wide) {
  if (complex) {
    return wide ? ScalarType::ComplexDouble : ScalarType::ComplexFloat;
  }
  return wide ? ScalarType::Double : ScalarType::Float;
}

// Checks that self is single or double precision, complex when
// `complex_in`, and out the same precision, complex when `complex_out`.
bool check_dtypes(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& self,
                  bool complex_in,
                  const Tensor& out,
                  bool complex_out) {
  const ScalarType t = self.scalar_type();
  const ScalarType single = fft_dtype(complex_in, false);
  const ScalarType wide = fft_dtype(complex_in, true);
  if (t != single && t != wide) {
    fail_arg(ctx,
             op,
             "'self' has dtype %s, expected %s or %s",
             toString(t),
             toString(single),
             toString(wide));
    return false;
  }
  return check_dtype(ctx, op, "out", out, fft_dtype(complex_out, t == wide));
}

} // namespace

Tensor& _fft_r2c_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     IntArrayRef dim,
                     int64_t normalization,
                     bool onesided,
                     Tensor& out) {
  const char* op = "_fft_r2c.out";
  FftPlan plan;
  Scratch scratch(nullptr, 0, 0);
  if (!check_dtypes(
          ctx, op, self, /*complex_in=*/false, out, /*complex_out=*/true) ||
      !plan_fft(ctx, op, self, dim, normalization, 0, 0, &plan, &scratch)) {
    return out;
  }
  const int64_t last = plan.dims[plan.ndim - 1];
  const Shape shape = tensor_view(self).shape;
  Shape out_shape = shape;
  if (onesided) {
    out_shape.sizes[last] = shape.sizes[last] / 2 + 1;
  }
  if (!resize_out(ctx, op, "out", out, out_shape.ref())) {
    return out;
  }
  // The full complex transform of the real signal; onesided keeps the
  // non-redundant half of the last dim.
  with_precision(self.scalar_type(), [&](auto zero) {
    using R = decltype(zero);
    stage_and_transform<R>(self, plan, plan.ndim, false, scratch);
    write_out<std::complex<R>>(plan.signal, shape, plan.scale, out);
  });
  return out;
}

Tensor& _fft_c2c_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     IntArrayRef dim,
                     int64_t normalization,
                     bool forward,
                     Tensor& out) {
  const char* op = "_fft_c2c.out";
  FftPlan plan;
  Scratch scratch(nullptr, 0, 0);
  if (!check_dtypes(
          ctx, op, self, /*complex_in=*/true, out, /*complex_out=*/true) ||
      !plan_fft(ctx, op, self, dim, normalization, 0, 0, &plan, &scratch) ||
      !resize_like(ctx, op, out, self)) {
    return out;
  }
  with_precision(self.scalar_type(), [&](auto zero) {
    using R = decltype(zero);
    stage_and_transform<std::complex<R>>(
        self, plan, plan.ndim, !forward, scratch);
    write_out<std::complex<R>>(
        plan.signal, tensor_view(self).shape, plan.scale, out);
  });
  return out;
}

Tensor& _fft_c2r_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     IntArrayRef dim,
                     int64_t normalization,
                     int64_t last_dim_size,
                     Tensor& out) {
  const char* op = "_fft_c2r.out";
  if (last_dim_size < 1) {
    fail_arg(ctx,
             op,
             "last_dim_size: expected at least 1, got %" PRId64,
             last_dim_size);
    return out;
  }
  if (!check_dtypes(
          ctx, op, self, /*complex_in=*/true, out, /*complex_out=*/false)) {
    return out;
  }
  if (self.dim() == 0 || dim.empty()) {
    fail_arg(ctx, op, "needs a self of at least 1 dim and at least 1 dim");
    return out;
  }
  // The input holds the first n / 2 + 1 coefficients of each last-dim lane
  // (or all n); the rest follow from Hermitian symmetry.
  int64_t last = 0;
  if (!normalize_dim(ctx, op, dim[dim.size() - 1], self.dim(), &last)) {
    return out;
  }
  const int64_t n = last_dim_size;
  const int64_t half = n / 2 + 1;
  const int64_t in_length = self.size(last);
  if (in_length != half && in_length != n) {
    fail_arg(ctx,
             op,
             "self: dim %" PRId64 " has %" PRId64
             " coefficients, expected %" PRId64
             " (last_dim_size / 2 + 1) or %" PRId64,
             last,
             in_length,
             half,
             n);
    return out;
  }
  Shape out_shape = tensor_view(self).shape;
  out_shape.sizes[last] = n;
  FftPlan plan;
  Scratch scratch(nullptr, 0, 0);
  if (!resize_out(ctx, op, "out", out, out_shape.ref()) ||
      !plan_fft(ctx,
                op,
                self,
                dim,
                normalization,
                n,
                static_cast<size_t>(out_shape.numel()),
                &plan,
                &scratch)) {
    return out;
  }
  // Inverse transforms along the other dims first, then each last-dim lane
  // extended to n points and transformed into `lanes` (out's shape).
  cdouble* lanes = plan.signal + self.numel();
  with_precision(self.scalar_type(), [&](auto zero) {
    using R = decltype(zero);
    stage_and_transform<std::complex<R>>(
        self, plan, plan.ndim - 1, true, scratch);
    const LaneTransform transform(n, scratch);
    for_each_lane(
        out_shape.ref(), last, [&](int64_t base, int64_t stride, int64_t) {
          const int64_t outer = base / (n * stride);
          const int64_t inner = base - outer * n * stride;
          const cdouble* in = plan.signal + outer * in_length * stride + inner;
          for (int64_t k = 0; k < n; ++k) {
            scratch.lane[k] =
                k < half ? in[k * stride] : std::conj(in[(n - k) * stride]);
          }
          transform.run(/*inverse=*/true);
          for (int64_t k = 0; k < n; ++k) {
            lanes[base + k * stride] = scratch.lane[k];
          }
        });
    write_out<R>(lanes, out_shape, plan.scale, out);
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
