// llama::fast_hadamard_transform.out: the Walsh-Hadamard transform of each
// row of the last dim, normalized by 1/sqrt(n) (so it is orthonormal), as
// SpinQuant rotates activations with. n must be a power of two; float32.
// In place in `out`: log2(n) passes of butterflies (a, b) -> (a + b, a - b).

#include <cinttypes>
#include <cmath>
#include <cstring>

#include <executorch/kernels/portable/util/checks.h>

namespace torch {
namespace executor {
namespace native {

Tensor& fast_hadamard_transform_out(KernelRuntimeContext& ctx,
                                    const Tensor& mat,
                                    Tensor& out) {
  constexpr const char* kOp = "llama::fast_hadamard_transform.out";
  if (mat.dim() == 0) {
    fail_arg(ctx, kOp, "mat must have at least one dim");
    return out;
  }
  const int64_t n = mat.size(mat.dim() - 1);
  if (n < 1 || (n & (n - 1)) != 0) {
    fail_arg(ctx, kOp, "the last dim must be a power of two, got %" PRId64, n);
    return out;
  }
  if (!check_dtype(ctx, kOp, "mat", mat, ScalarType::Float) ||
      !check_dtype(ctx, kOp, "out", out, ScalarType::Float) ||
      !resize_like(ctx, kOp, out, mat)) {
    return out;
  }
  if (!::executorch::runtime::tensor_is_contiguous(mat) ||
      !::executorch::runtime::tensor_is_contiguous(out)) {
    fail_arg(ctx, kOp, "mat and out must be contiguous");
    return out;
  }
  if (mat.numel() == 0) {
    return out;
  }
  float* data = out.mutable_data_ptr<float>();
  if (data != mat.const_data_ptr<float>()) {
    std::memcpy(data, mat.const_data_ptr<float>(), mat.nbytes());
  }
  const float norm =
      static_cast<float>(1.0 / std::sqrt(static_cast<double>(n)));
  for (int64_t row = 0; row < mat.numel() / n; ++row) {
    float* x = data + row * n;
    for (int64_t half = 1; half < n; half *= 2) {
      for (int64_t i = 0; i < n; i += 2 * half) {
        for (int64_t j = i; j < i + half; ++j) {
          const float a = x[j];
          const float b = x[j + half];
          x[j] = a + b;
          x[j + half] = a - b;
        }
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      x[j] *= norm;
    }
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
