// The SimdKernels table of one instruction set. The build compiles this
// file once per instruction set (see isa.h), with ET_OPT_VECTOR_BYTES and
// ET_OPT_ISA_NAMESPACE set; the function it defines is named after the
// latter, e.g. simd_kernels_avx2().

#include <executorch/kernels/optimized/simd/simd_kernels.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include <executorch/kernels/optimized/simd/vec.h>
#include <executorch/kernels/optimized/simd/vec_math.h>

namespace executorch {
namespace kernels {
namespace optimized {
namespace simd {
inline namespace ET_OPT_ISA_NAMESPACE {

namespace {

// ---- GEMM ----------------------------------------------------------------

// Register block: MR rows of C by kNv vectors. MR * kNv accumulators hide
// the FMA latency; all of them, the B vectors and one broadcast fit the
// register file (16 registers up to AVX2, 32 with AVX-512).
constexpr int kNv = 2;
constexpr int kMr = kVecBytes == 64 ? 8 : 6;
constexpr int kNr = kNv * kLanes;

// kR rows of C (kMr but for a short last panel). A(i, k) is a[i * kMr + k]
// in a packed panel (kRows false: kMr floats per step), a[i * lda + k] read
// in place from rows of A (kRows true).
template <bool kRows, int kR = kMr>
inline void gemm_block(int64_t kc,
                       const float* __restrict a,
                       int64_t lda,
                       const float* __restrict b,
                       float* c,
                       int64_t ldc,
                       bool accumulate) {
  Vec acc[kR][kNv];
  for (int i = 0; i < kR; ++i) {
    for (int j = 0; j < kNv; ++j) {
      acc[i][j] = Vec{};
    }
  }
  for (int64_t k = 0; k < kc; ++k) {
    Vec bv[kNv];
    for (int j = 0; j < kNv; ++j) {
      bv[j] = load(b + j * kLanes);
    }
    for (int i = 0; i < kR; ++i) {
      const Vec av = broadcast(kRows ? a[i * lda] : a[i]);
      for (int j = 0; j < kNv; ++j) {
        acc[i][j] += av * bv[j];
      }
    }
    a += kRows ? 1 : kMr;
    b += kNr;
  }
  for (int i = 0; i < kR; ++i) {
    for (int j = 0; j < kNv; ++j) {
      float* p = c + i * ldc + j * kLanes;
      store(p, accumulate ? load(p) + acc[i][j] : acc[i][j]);
    }
  }
}

void gemm_microkernel(int64_t kc,
                      const float* a,
                      const float* b,
                      float* c,
                      int64_t ldc,
                      bool accumulate) {
  gemm_block<false>(kc, a, 0, b, c, ldc, accumulate);
}

template <int... kRs>
void few_rows_of(std::integer_sequence<int, kRs...>,
                 int64_t rows,
                 int64_t kc,
                 const float* a,
                 int64_t lda,
                 const float* b,
                 float* c,
                 int64_t ldc,
                 bool accumulate) {
  // Row counts 1 .. kMr - 1: the block for `rows`.
  ((rows == kRs + 1
        ? gemm_block<true, kRs + 1>(kc, a, lda, b, c, ldc, accumulate)
        : void()),
   ...);
}

void gemm_microkernel_rows(int64_t kc,
                           const float* a,
                           int64_t lda,
                           const float* b,
                           float* c,
                           int64_t ldc,
                           bool accumulate,
                           int64_t rows) {
  if (rows == kMr) {
    gemm_block<true>(kc, a, lda, b, c, ldc, accumulate);
    return;
  }
  few_rows_of(std::make_integer_sequence<int, kMr - 1>{},
              rows,
              kc,
              a,
              lda,
              b,
              c,
              ldc,
              accumulate);
}

// ---- Elementwise ---------------------------------------------------------

// Applies `vec_fn` to whole vectors and the tail. Lanes past the tail are
// zero in the call and dropped after it.
template <typename F>
inline void map_unary(const float* in, float* out, int64_t n, F vec_fn) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    store(out + i, vec_fn(load(in + i)));
  }
  if (i < n) {
    store_partial(out + i, vec_fn(load_partial(in + i, n - i)), n - i);
  }
}

template <typename F>
inline void map_binary(const float* a,
                       int64_t a_step,
                       const float* b,
                       int64_t b_step,
                       float* out,
                       int64_t n,
                       F vec_fn) {
  // A broadcast operand is one value in every lane.
  const Vec a_all = broadcast(a[0]);
  const Vec b_all = broadcast(b[0]);
  auto load_a = [&](int64_t i) { return a_step == 0 ? a_all : load(a + i); };
  auto load_b = [&](int64_t i) { return b_step == 0 ? b_all : load(b + i); };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    store(out + i, vec_fn(load_a(i), load_b(i)));
  }
  if (i < n) {
    const int64_t rest = n - i;
    const Vec av = a_step == 0 ? a_all : load_partial(a + i, rest);
    const Vec bv = b_step == 0 ? b_all : load_partial(b + i, rest);
    store_partial(out + i, vec_fn(av, bv), rest);
  }
}

void binary(BinaryOp op,
            const float* a,
            int64_t a_step,
            const float* b,
            int64_t b_step,
            float* out,
            int64_t n,
            float alpha) {
  if (n <= 0) {
    return;
  }
  const Vec va = broadcast(alpha);
  switch (op) {
    case BinaryOp::kAdd:
      if (alpha == 1.0f) {
        map_binary(
            a, a_step, b, b_step, out, n, [](Vec x, Vec y) { return x + y; });
      } else {
        map_binary(a, a_step, b, b_step, out, n, [va](Vec x, Vec y) {
          return x + va * y;
        });
      }
      return;
    case BinaryOp::kSub:
      map_binary(a, a_step, b, b_step, out, n, [va](Vec x, Vec y) {
        return x - va * y;
      });
      return;
    case BinaryOp::kMul:
      map_binary(
          a, a_step, b, b_step, out, n, [](Vec x, Vec y) { return x * y; });
      return;
    case BinaryOp::kDiv:
      map_binary(
          a, a_step, b, b_step, out, n, [](Vec x, Vec y) { return x / y; });
      return;
    case BinaryOp::kMaximum:
      map_binary(
          a, a_step, b, b_step, out, n, [](Vec x, Vec y) { return max(x, y); });
      return;
    case BinaryOp::kMinimum:
      map_binary(
          a, a_step, b, b_step, out, n, [](Vec x, Vec y) { return min(x, y); });
      return;
  }
}

void unary(
    UnaryOp op, const float* in, float* out, int64_t n, float p0, float p1) {
  if (n <= 0) {
    return;
  }
  const Vec v0 = broadcast(p0);
  const Vec v1 = broadcast(p1);
  const Vec zero{};
  const Vec one = broadcast(1.0f);
  switch (op) {
    case UnaryOp::kExp:
      return map_unary(in, out, n, [](Vec x) { return exp(x); });
    case UnaryOp::kTanh:
      return map_unary(in, out, n, [](Vec x) { return tanh(x); });
    case UnaryOp::kSigmoid:
      return map_unary(in, out, n, [](Vec x) { return sigmoid(x); });
    case UnaryOp::kGeluErf:
      return map_unary(in, out, n, [](Vec x) { return gelu_erf(x); });
    case UnaryOp::kGeluTanh:
      return map_unary(in, out, n, [](Vec x) { return gelu_tanh(x); });
    case UnaryOp::kSilu:
      return map_unary(in, out, n, [](Vec x) { return x * sigmoid(x); });
    case UnaryOp::kRelu:
      // relu(NaN) is NaN in PyTorch.
      return map_unary(
          in, out, n, [zero](Vec x) { return select(x < zero, zero, x); });
    case UnaryOp::kClamp:
      return map_unary(in, out, n, [v0, v1](Vec x) {
        x = select(x < v0, v0, x);
        return select(x > v1, v1, x);
      });
    case UnaryOp::kAffine:
      return map_unary(in, out, n, [v0, v1](Vec x) { return v0 * x + v1; });
    case UnaryOp::kHardswish:
      return map_unary(in, out, n, [zero](Vec x) {
        Vec r = x + broadcast(3.0f);
        r = select(r < zero, zero, r);
        r = select(r > broadcast(6.0f), broadcast(6.0f), r);
        return x * r * broadcast(1.0f / 6.0f);
      });
    case UnaryOp::kNeg:
      return map_unary(in, out, n, [](Vec x) { return -x; });
    case UnaryOp::kAbs:
      return map_unary(in, out, n, [](Vec x) { return abs(x); });
    case UnaryOp::kSqrt:
      return map_unary(in, out, n, [](Vec x) {
        float lanes[kLanes];
        store(lanes, x);
        for (float& l : lanes) {
          l = __builtin_sqrtf(l);
        }
        return load(lanes);
      });
    case UnaryOp::kRsqrt:
      return map_unary(in, out, n, [one](Vec x) {
        float lanes[kLanes];
        store(lanes, x);
        for (float& l : lanes) {
          l = __builtin_sqrtf(l);
        }
        return one / load(lanes);
      });
    case UnaryOp::kReciprocal:
      return map_unary(in, out, n, [one](Vec x) { return one / x; });
  }
}

// ---- Reductions ----------------------------------------------------------

// Four independent accumulators hide the add latency.
float sum(const float* x, int64_t n) {
  Vec s0{}, s1{}, s2{}, s3{};
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    s0 += load(x + i);
    s1 += load(x + i + kLanes);
    s2 += load(x + i + 2 * kLanes);
    s3 += load(x + i + 3 * kLanes);
  }
  for (; i + kLanes <= n; i += kLanes) {
    s0 += load(x + i);
  }
  if (i < n) {
    s1 += load_partial(x + i, n - i);
  }
  return reduce_add((s0 + s1) + (s2 + s3));
}

void accumulate(float* acc, const float* x, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    store(acc + i, load(acc + i) + load(x + i));
  }
  for (; i < n; ++i) {
    acc[i] += x[i];
  }
}

// The largest value of a softmax row. NaN need not propagate here: a NaN
// element's exp makes the row's sum, and so every output, NaN anyway. Two
// accumulators halve the compare-and-select chain the loop waits on.
float softmax_row_max(const float* x, int64_t n) {
  Vec m0 = broadcast(-__builtin_inff());
  Vec m1 = m0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Vec a = load(x + i);
    const Vec b = load(x + i + kLanes);
    m0 = select(a > m0, a, m0);
    m1 = select(b > m1, b, m1);
  }
  if (i + kLanes <= n) {
    const Vec a = load(x + i);
    m0 = select(a > m0, a, m0);
    i += kLanes;
  }
  float result = reduce_max(select(m1 > m0, m1, m0));
  for (; i < n; ++i) {
    result = x[i] > result ? x[i] : result;
  }
  return result;
}

void softmax_row(const float* in, float* out, int64_t n, bool log) {
  if (n <= 0) {
    return;
  }
  const float row_max = softmax_row_max(in, n);
  // A row of -inf (fully masked) gives NaN, as in PyTorch; so does a NaN.
  const Vec vmax = broadcast(row_max);
  Vec total{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec e = exp_nonpositive(load(in + i) - vmax);
    if (!log) {
      store(out + i, e);
    }
    total += e;
  }
  if (i < n) {
    // Padding lanes hold -inf, whose exp is 0: they add nothing to the sum.
    float lanes[kLanes];
    for (int64_t l = n - i; l < kLanes; ++l) {
      lanes[l] = -__builtin_inff();
    }
    std::memcpy(lanes, in + i, (n - i) * sizeof(float));
    const Vec e = exp_nonpositive(load(lanes) - vmax);
    if (!log) {
      store_partial(out + i, e, n - i);
    }
    total += e;
  }
  const float s = reduce_add(total);
  if (log) {
    const Vec shift = broadcast(row_max + std::log(s));
    map_unary(in, out, n, [shift](Vec x) { return x - shift; });
  } else {
    const Vec scale = broadcast(1.0f / s);
    map_unary(out, out, n, [scale](Vec x) { return x * scale; });
  }
}

void softmax_lanes(const float* in,
                   float* out,
                   int64_t n,
                   int64_t stride,
                   int64_t lanes,
                   bool log,
                   float* scratch) {
  // Running max over rows, then sums of exp, then the outputs, each pass
  // vectorized across the lanes.
  float* row_max = scratch;
  for (int64_t l = 0; l < lanes; ++l) {
    row_max[l] = -__builtin_inff();
  }
  for (int64_t r = 0; r < n; ++r) {
    binary(BinaryOp::kMaximum,
           row_max,
           1,
           in + r * stride,
           1,
           row_max,
           lanes,
           1.0f);
  }
  // For softmax, out holds exp(x - max) until the lane's sum is known.
  for (int64_t l0 = 0; l0 < lanes; l0 += kLanes) {
    const int64_t w = lanes - l0 < kLanes ? lanes - l0 : kLanes;
    const Vec m =
        w == kLanes ? load(row_max + l0) : load_partial(row_max + l0, w);
    Vec total{};
    for (int64_t r = 0; r < n; ++r) {
      const float* src = in + r * stride + l0;
      const Vec x = w == kLanes ? load(src) : load_partial(src, w);
      const Vec e = exp_nonpositive(x - m);
      total += e;
      if (!log) {
        float* dst = out + r * stride + l0;
        w == kLanes ? store(dst, e) : store_partial(dst, e, w);
      }
    }
    float t[kLanes];
    store(t, total);
    for (int64_t r = 0; r < n; ++r) {
      float* dst = out + r * stride + l0;
      if (log) {
        const float* src = in + r * stride + l0;
        for (int64_t l = 0; l < w; ++l) {
          dst[l] = src[l] - (row_max[l0 + l] + std::log(t[l]));
        }
      } else {
        const Vec scale = broadcast(1.0f) / load(t);
        const Vec e = w == kLanes ? load(dst) : load_partial(dst, w);
        w == kLanes ? store(dst, e * scale) : store_partial(dst, e * scale, w);
      }
    }
  }
}

void layer_norm_row(const float* in,
                    float* out,
                    int64_t n,
                    const float* weight,
                    const float* bias,
                    float eps,
                    float* mean_out,
                    float* rstd_out) {
  // Two passes: the variance of centered values does not cancel. The
  // second also sums the deviations, which corrects the mean's rounding
  // (the corrected two-pass algorithm): a constant row then has its mean
  // exactly and normalizes to 0, as in PyTorch, where a mean one ulp off
  // would be amplified by 1 / sqrt(eps).
  const float count = static_cast<float>(std::max<int64_t>(n, 1));
  const float rough_mean = sum(in, n) / count;
  const Vec vrough = broadcast(rough_mean);
  Vec dev{}, sq{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec d = load(in + i) - vrough;
    dev += d;
    sq += d * d;
  }
  float dev_sum = reduce_add(dev);
  float var = reduce_add(sq);
  for (; i < n; ++i) {
    const float d = in[i] - rough_mean;
    dev_sum += d;
    var += d * d;
  }
  const float mean = rough_mean + dev_sum / count;
  var = std::max(0.0f, (var - dev_sum * dev_sum / count) / count);
  const float rstd = 1.0f / std::sqrt(var + eps);
  *mean_out = mean;
  *rstd_out = rstd;
  const Vec vmean = broadcast(mean);
  const Vec vrstd = broadcast(rstd);
  const Vec one = broadcast(1.0f);
  const Vec zero{};
  i = 0;
  auto norm = [&](Vec x, Vec w, Vec b) { return (x - vmean) * vrstd * w + b; };
  for (; i + kLanes <= n; i += kLanes) {
    const Vec w = weight != nullptr ? load(weight + i) : one;
    const Vec b = bias != nullptr ? load(bias + i) : zero;
    store(out + i, norm(load(in + i), w, b));
  }
  if (i < n) {
    const int64_t rest = n - i;
    const Vec w = weight != nullptr ? load_partial(weight + i, rest) : one;
    const Vec b = bias != nullptr ? load_partial(bias + i, rest) : zero;
    store_partial(out + i, norm(load_partial(in + i, rest), w, b), rest);
  }
}

// The accumulators of kUnroll vectors of the output stay in registers
// across all taps: each output is stored once. The last vector is loaded
// whole from every row (the caller leaves room) and stored in part.
void weighted_rows(const float* const* rows,
                   const float* weights,
                   int64_t taps,
                   float bias,
                   float* out,
                   int64_t n) {
  static_assert(kLanes <= kWeightedRowsOverread, "rows read past n");
  constexpr int kUnroll = 2;
  int64_t x = 0;
  for (; x + kUnroll * kLanes <= n; x += kUnroll * kLanes) {
    Vec acc[kUnroll];
    for (int u = 0; u < kUnroll; ++u) {
      acc[u] = broadcast(bias);
    }
    for (int64_t t = 0; t < taps; ++t) {
      if (rows[t] == nullptr) {
        continue;
      }
      const Vec w = broadcast(weights[t]);
      for (int u = 0; u < kUnroll; ++u) {
        acc[u] += w * load(rows[t] + x + u * kLanes);
      }
    }
    for (int u = 0; u < kUnroll; ++u) {
      store(out + x + u * kLanes, acc[u]);
    }
  }
  for (; x < n; x += kLanes) {
    Vec acc = broadcast(bias);
    for (int64_t t = 0; t < taps; ++t) {
      if (rows[t] != nullptr) {
        acc += broadcast(weights[t]) * load(rows[t] + x);
      }
    }
    if (n - x >= kLanes) {
      store(out + x, acc);
    } else {
      store_partial(out + x, acc, n - x);
    }
  }
}

// ---- Winograd F(4x4, 3x3) -------------------------------------------------
// Interpolation points 0, 1, -1, 2, -2 and infinity (cpu/winograd.h).

// t = B^T d for one column (or row) of six vectors.
inline void winograd_input_1d(const Vec* d, int64_t step, Vec* t, int64_t out) {
  const Vec d0 = d[0], d1 = d[step], d2 = d[2 * step], d3 = d[3 * step];
  const Vec d4 = d[4 * step], d5 = d[5 * step];
  const Vec four = broadcast(4.0f), five = broadcast(5.0f);
  const Vec two = broadcast(2.0f);
  t[0] = four * d0 - five * d2 + d4;
  t[out] = (d3 + d4) - four * (d1 + d2);
  t[2 * out] = (d4 - d3) + four * (d1 - d2);
  t[3 * out] = (d4 - d2) + two * (d3 - d1);
  t[4 * out] = (d4 - d2) - two * (d3 - d1);
  t[5 * out] = four * d1 - five * d3 + d5;
}

// o = A^T m for one column (or row) of six vectors.
inline void winograd_output_1d(const Vec* m,
                               int64_t step,
                               Vec* o,
                               int64_t out) {
  const Vec m1 = m[step], m2 = m[2 * step], m3 = m[3 * step];
  const Vec m4 = m[4 * step];
  const Vec sum12 = m1 + m2, diff12 = m1 - m2;
  const Vec sum34 = m3 + m4, diff34 = m3 - m4;
  o[0] = m[0] + sum12 + sum34;
  o[out] = diff12 + broadcast(2.0f) * diff34;
  o[2 * out] = sum12 + broadcast(4.0f) * sum34;
  o[3 * out] = diff12 + broadcast(8.0f) * diff34 + m[5 * step];
}

// t = G g for one column (or row) of three vectors: G's rows are (1/4, 0,
// 0), -(1, 1, 1)/6, -(1, -1, 1)/6, (1/24, 1/12, 1/6), (1/24, -1/12, 1/6),
// (0, 0, 1).
inline void winograd_filter_1d(const Vec* g,
                               int64_t step,
                               Vec* t,
                               int64_t out) {
  const Vec a = g[0], b = g[step], c = g[2 * step];
  const Vec ac = a + c;
  const Vec ac_24 = broadcast(1.0f / 24) * a + broadcast(1.0f / 6) * c;
  const Vec b_12 = broadcast(1.0f / 12) * b;
  t[0] = broadcast(0.25f) * a;
  t[out] = broadcast(-1.0f / 6) * (ac + b);
  t[2 * out] = broadcast(-1.0f / 6) * (ac - b);
  t[3 * out] = ac_24 + b_12;
  t[4 * out] = ac_24 - b_12;
  t[5 * out] = c;
}

void winograd_filter(const float* const* filters,
                     int64_t count,
                     int64_t s_y,
                     int64_t s_x,
                     float* u,
                     int64_t u_stride) {
  for (int64_t j = 0; j < count; j += kLanes) {
    const int64_t live = std::min<int64_t>(kLanes, count - j);
    // The lanes' taps, gathered: lane l of g[y * 3 + x] is filter j + l's.
    float taps[9][kLanes] = {};
    for (int64_t l = 0; l < live; ++l) {
      const float* f = filters[j + l];
      for (int y = 0; y < 3; ++y) {
        for (int x = 0; x < 3; ++x) {
          taps[y * 3 + x][l] = f[y * s_y + x * s_x];
        }
      }
    }
    Vec g[9], t[18], w[36];
    for (int i = 0; i < 9; ++i) {
      g[i] = load(taps[i]);
    }
    // Columns (G g: 6 x 3), then rows ((G g) G^T: 6 x 6).
    for (int x = 0; x < 3; ++x) {
      winograd_filter_1d(g + x, 3, t + x, 3);
    }
    for (int r = 0; r < 6; ++r) {
      winograd_filter_1d(t + r * 3, 1, w + r * 6, 1);
    }
    for (int e = 0; e < 36; ++e) {
      if (live == kLanes) {
        store(u + e * u_stride + j, w[e]);
      } else {
        store_partial(u + e * u_stride + j, w[e], live);
      }
    }
  }
}

void winograd_input(const float* const* window,
                    int64_t channels,
                    float* v,
                    int64_t v_stride) {
  for (int64_t c = 0; c < channels; c += kLanes) {
    const int64_t live = std::min<int64_t>(kLanes, channels - c);
    Vec d[36], t[36];
    for (int e = 0; e < 36; ++e) {
      d[e] = live == kLanes ? load(window[e] + c)
                            : load_partial(window[e] + c, live);
    }
    // Columns (B^T d), then rows ((B^T d) B).
    for (int s = 0; s < 6; ++s) {
      winograd_input_1d(d + s, 6, t + s, 6);
    }
    for (int r = 0; r < 6; ++r) {
      winograd_input_1d(t + r * 6, 1, d + r * 6, 1);
    }
    for (int e = 0; e < 36; ++e) {
      if (live == kLanes) {
        store(v + e * v_stride + c, d[e]);
      } else {
        store_partial(v + e * v_stride + c, d[e], live);
      }
    }
  }
}

void winograd_output(const float* m,
                     int64_t m_stride,
                     int64_t channels,
                     const float* bias,
                     float min,
                     float max,
                     float* const* out) {
  const Vec lo = broadcast(min);
  const Vec hi = broadcast(max);
  for (int64_t c = 0; c < channels; c += kLanes) {
    const int64_t live = std::min<int64_t>(kLanes, channels - c);
    Vec t[36], o[24];
    for (int e = 0; e < 36; ++e) {
      t[e] = live == kLanes ? load(m + e * m_stride + c)
                            : load_partial(m + e * m_stride + c, live);
    }
    // Columns (A^T m: 4 x 6), then rows (4 x 4).
    for (int s = 0; s < 6; ++s) {
      winograd_output_1d(t + s, 6, o + s, 6);
    }
    const Vec b = bias == nullptr  ? Vec{}
                  : live == kLanes ? load(bias + c)
                                   : load_partial(bias + c, live);
    for (int r = 0; r < 4; ++r) {
      winograd_output_1d(o + r * 6, 1, t + r * 4, 1);
    }
    for (int p = 0; p < 16; ++p) {
      if (out[p] == nullptr) {
        continue;
      }
      const Vec y = simd::min(simd::max(t[p] + b, lo), hi);
      if (live == kLanes) {
        store(out[p] + c, y);
      } else {
        store_partial(out[p] + c, y, live);
      }
    }
  }
}

} // namespace

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace simd

#define ET_OPT_CONCAT_(a, b) a##b
#define ET_OPT_CONCAT(a, b) ET_OPT_CONCAT_(a, b)
#define ET_OPT_STRINGIFY_(a) #a
#define ET_OPT_STRINGIFY(a) ET_OPT_STRINGIFY_(a)

const SimdKernels& ET_OPT_CONCAT(simd_kernels_, ET_OPT_ISA_NAMESPACE)() {
  static const SimdKernels kernels = {
      ET_OPT_STRINGIFY(ET_OPT_ISA_NAMESPACE),
      simd::kMr,
      simd::kNr,
      simd::gemm_microkernel,
      simd::gemm_microkernel_rows,
      simd::binary,
      simd::unary,
      simd::sum,
      simd::accumulate,
      simd::softmax_row,
      simd::softmax_lanes,
      simd::layer_norm_row,
      simd::weighted_rows,
      simd::winograd_filter,
      simd::winograd_input,
      simd::winograd_output,
  };
  return kernels;
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
