// Random operators: rand, randn, randperm and training-mode native_dropout.
//
// Random source: a counter-based generator. Every value is
// splitmix64(kSeed + n) for a process-wide counter n that each kernel call
// advances by the number of values it draws (one atomic add per call), so
// the kernels need no heap, no per-context state and no locks, calls from
// different threads never share a value, and a fresh process replays the
// same sequence. The values cannot match eager PyTorch's (a different
// generator), so the operator sweep checks them by their properties.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <tuple>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

constexpr uint64_t kSeed = 0x853c49e6748fea9bULL;

std::atomic<uint64_t> draw_counter{0};

// The counter values [first, first + count) for one call.
uint64_t reserve_draws(uint64_t count) {
  return draw_counter.fetch_add(count, std::memory_order_relaxed);
}

// splitmix64: a bijective 64-bit mix with good statistical quality.
uint64_t random_bits(uint64_t n) {
  uint64_t z = kSeed + n * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with `digits` significant bits, so the value stays
// below 1 after rounding to a type with that many mantissa bits.
double uniform(uint64_t n, int digits) {
  return static_cast<double>(random_bits(n) >> (64 - digits)) /
         static_cast<double>(uint64_t(1) << digits);
}

template <typename T>
constexpr int mantissa_digits() {
  return std::is_same<T, double>::value                   ? 53
         : std::is_same<T, float>::value                  ? 24
         : std::is_same<T, executorch::aten::Half>::value ? 11
                                                          : 8; // BFloat16
}

// Resizes out to `size` for a factory operator.
bool resize_to_size(KernelRuntimeContext& ctx,
                    const char* op,
                    IntArrayRef size,
                    const Tensor& out) {
  Shape shape;
  return shape_from_sizes(ctx, op, size, &shape) &&
         resize_out(ctx, op, "out", out, shape.ref());
}

} // namespace

// Uniform samples in [0, 1).
Tensor& rand_out(KernelRuntimeContext& ctx, IntArrayRef size, Tensor& out) {
  const char* op = "rand.out";
  if (!resize_to_size(ctx, op, size, out)) {
    return out;
  }
  ET_SWITCH_FLOATHBF16_TYPES(out.scalar_type(), ctx, op, T, [&] {
    T* o = out.mutable_data_ptr<T>();
    const uint64_t first = reserve_draws(out.numel());
    for (ssize_t i = 0; i < out.numel(); ++i) {
      o[i] = static_cast<T>(uniform(first + i, mantissa_digits<T>()));
    }
  });
  return out;
}

// Standard normal samples (Box-Muller on two uniforms per value).
Tensor& randn_out(KernelRuntimeContext& ctx, IntArrayRef size, Tensor& out) {
  const char* op = "randn.out";
  if (!resize_to_size(ctx, op, size, out)) {
    return out;
  }
  constexpr double kTwoPi = 6.283185307179586;
  ET_SWITCH_FLOATHBF16_TYPES(out.scalar_type(), ctx, op, T, [&] {
    T* o = out.mutable_data_ptr<T>();
    const uint64_t first = reserve_draws(2 * out.numel());
    for (ssize_t i = 0; i < out.numel(); ++i) {
      // 1 - u is in (0, 1], so the log is finite.
      const double radius =
          std::sqrt(-2.0 * std::log(1.0 - uniform(first + 2 * i, 53)));
      const double angle = kTwoPi * uniform(first + 2 * i + 1, 53);
      o[i] = static_cast<T>(radius * std::cos(angle));
    }
  });
  return out;
}

// A uniformly random permutation of 0 .. n-1 (Fisher-Yates).
Tensor& randperm_out(KernelRuntimeContext& ctx, int64_t n, Tensor& out) {
  const char* op = "randperm.out";
  if (n < 0) {
    fail_arg(ctx, op, "n must be non-negative, got %lld", (long long)n);
    return out;
  }
  const SizesType size = static_cast<SizesType>(n);
  if (!resize_out(ctx, op, "out", out, ArrayRef<SizesType>(&size, 1))) {
    return out;
  }
  ET_SWITCH_REALHBF16_TYPES(out.scalar_type(), ctx, op, T, [&] {
    // Every value must be representable: eager rejects n beyond the
    // dtype's range, and so do we.
    if (n > 0 && static_cast<double>(static_cast<T>(n - 1)) !=
                     static_cast<double>(n - 1)) {
      fail_arg(ctx,
               op,
               "n = %lld does not fit dtype %s",
               (long long)n,
               ::executorch::runtime::toString(out.scalar_type()));
      return;
    }
    T* o = out.mutable_data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      o[i] = static_cast<T>(i);
    }
    const uint64_t first = reserve_draws(n);
    for (int64_t i = n - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(random_bits(first + i) %
                                             static_cast<uint64_t>(i + 1));
      std::swap(o[i], o[j]);
    }
  });
  return out;
}

// Dropout: in training each element is kept with probability 1 - p and
// scaled by 1 / (1 - p), else zeroed; mask says which were kept. At
// inference (train false) or p == 0 it is the identity with an all-true
// mask.
std::tuple<Tensor&, Tensor&> native_dropout_out(KernelRuntimeContext& ctx,
                                                const Tensor& input,
                                                double p,
                                                std::optional<bool> train,
                                                Tensor& out,
                                                Tensor& mask) {
  const char* op = "native_dropout.out";
  std::tuple<Tensor&, Tensor&> result(out, mask);
  if (!(p >= 0.0 && p <= 1.0)) {
    fail_arg(ctx, op, "p must be in [0, 1], got %g", p);
    return result;
  }
  if (!check_dtype(ctx, op, "mask", mask, ScalarType::Bool) ||
      !check_same_dtype(ctx, op, "out", out, input) ||
      !check_default_dim_order(ctx, op, {&input, &out, &mask}) ||
      !resize_like(ctx, op, out, input) || !resize_like(ctx, op, mask, input)) {
    return result;
  }
  bool* keep = mask.mutable_data_ptr<bool>();
  if (!train.value_or(true) || p == 0.0) {
    std::fill(keep, keep + mask.numel(), true);
    copy_view(ctx, op, input, tensor_view(input), out);
    return result;
  }
  const uint64_t first = reserve_draws(input.numel());
  for (ssize_t i = 0; i < input.numel(); ++i) {
    keep[i] = uniform(first + i, 53) >= p;
  }
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<std::is_same<T, double>::value, double, float>;
    const C scale = p < 1.0 ? static_cast<C>(1.0 / (1.0 - p)) : C(0);
    const T* in = input.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (ssize_t i = 0; i < input.numel(); ++i) {
      o[i] = keep[i] ? static_cast<T>(static_cast<C>(in[i]) * scale) : T(0);
    }
  });
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
