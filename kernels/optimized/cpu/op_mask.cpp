// The masking operators of a safe softmax (what `_safe_softmax`, in every
// exported scaled_dot_product_attention, decomposes into): eq.Scalar_out
// (float32 to bool), logical_not.out (bool), any.out along the last dim
// (bool) and where.self_out (float32, a bool condition that is elementwise
// or constant over trailing dims, like a row mask [B, H, L, 1]). Plain loops
// over contiguous tensors on the calling thread: they move a byte or a
// float per element, and the portable kernels' per-element dtype and
// broadcast machinery cost several times that. Other dtypes, layouts and
// shapes, and every bad argument, go to the portable kernels.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <executorch/kernels/portable/util/checks.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::runtime::tensor_is_contiguous;

bool contiguous_of(const Tensor& t, ScalarType dtype) {
  return t.scalar_type() == dtype && tensor_is_contiguous(t);
}

// Resizes `out` to `like` and checks that it is contiguous of `dtype`;
// false when the fast path does not apply. *failed is set when the resize
// failed (the context says why).
bool prepare_out(KernelRuntimeContext& ctx,
                 const char* op,
                 const Tensor& like,
                 ScalarType dtype,
                 Tensor& out,
                 bool* failed) {
  if (out.scalar_type() != dtype) {
    return false;
  }
  if (!resize_like(ctx, op, out, like)) {
    *failed = true;
    return false;
  }
  return tensor_is_contiguous(out);
}

bool eq_scalar_fast(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Scalar& other,
                    Tensor& out) {
  bool failed = false;
  if (!contiguous_of(self, ScalarType::Float) ||
      !prepare_out(
          ctx, "eq.Scalar_out", self, ScalarType::Bool, out, &failed)) {
    return failed;
  }
  // The portable kernel compares in float32 too, the Scalar converted.
  const float value = other.to<float>();
  const float* in = self.const_data_ptr<float>();
  bool* dst = out.mutable_data_ptr<bool>();
  for (ssize_t i = 0, n = self.numel(); i < n; ++i) {
    dst[i] = in[i] == value;
  }
  return true;
}

bool logical_not_fast(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      Tensor& out) {
  bool failed = false;
  if (!contiguous_of(self, ScalarType::Bool) ||
      !prepare_out(
          ctx, "logical_not.out", self, ScalarType::Bool, out, &failed)) {
    return failed;
  }
  // As bytes, so that the loop vectorizes.
  const uint8_t* in = static_cast<const uint8_t*>(self.const_data_ptr());
  uint8_t* dst = static_cast<uint8_t*>(out.mutable_data_ptr());
  for (ssize_t i = 0, n = self.numel(); i < n; ++i) {
    dst[i] = in[i] == 0;
  }
  return true;
}

bool any_last_dim_fast(KernelRuntimeContext& ctx,
                       const Tensor& self,
                       int64_t dim,
                       bool keepdim,
                       Tensor& out) {
  const int64_t rank = self.dim();
  if (rank == 0 || rank > static_cast<int64_t>(kMaxDims) ||
      (dim != rank - 1 && dim != -1) ||
      !contiguous_of(self, ScalarType::Bool) ||
      out.scalar_type() != ScalarType::Bool) {
    return false;
  }
  const int64_t row = self.size(rank - 1);
  if (row == 0) {
    return false;
  }
  ::executorch::aten::SizesType sizes[kMaxDims];
  for (int64_t d = 0; d < rank - 1; ++d) {
    sizes[d] = self.size(d);
  }
  sizes[rank - 1] = 1;
  if (!resize_out(ctx,
                  "any.out",
                  "out",
                  out,
                  {sizes, static_cast<size_t>(keepdim ? rank : rank - 1)})) {
    return true; // the context says why
  }
  if (!tensor_is_contiguous(out)) {
    return false;
  }
  const bool* in = self.const_data_ptr<bool>();
  bool* dst = out.mutable_data_ptr<bool>();
  for (int64_t r = 0, rows = self.numel() / row; r < rows; ++r) {
    dst[r] =
        std::any_of(in + r * row, in + (r + 1) * row, [](bool b) { return b; });
  }
  return true;
}

bool where_fast(KernelRuntimeContext& ctx,
                const Tensor& condition,
                const Tensor& self,
                const Tensor& other,
                Tensor& out) {
  const int64_t rank = self.dim();
  if (!contiguous_of(condition, ScalarType::Bool) ||
      !contiguous_of(self, ScalarType::Float) ||
      !contiguous_of(other, ScalarType::Float) || other.dim() != rank ||
      condition.dim() != rank) {
    return false;
  }
  // The condition matches self's dims up to some d and is 1 from there on:
  // each of its values picks a block of `inner` elements.
  int64_t d = 0;
  while (d < rank && condition.size(d) == self.size(d)) {
    ++d;
  }
  int64_t inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (other.size(i) != self.size(i) || (i >= d && condition.size(i) != 1)) {
      return false;
    }
    if (i >= d) {
      inner *= self.size(i);
    }
  }
  bool failed = false;
  if (!prepare_out(
          ctx, "where.self_out", self, ScalarType::Float, out, &failed)) {
    return failed;
  }
  const bool* pick = condition.const_data_ptr<bool>();
  const float* a = self.const_data_ptr<float>();
  const float* b = other.const_data_ptr<float>();
  float* dst = out.mutable_data_ptr<float>();
  const ssize_t blocks = condition.numel();
  if (inner == 1) {
    for (ssize_t i = 0; i < blocks; ++i) {
      dst[i] = pick[i] ? a[i] : b[i];
    }
    return true;
  }
  for (ssize_t r = 0; r < blocks; ++r) {
    const float* src = (pick[r] ? a : b) + r * inner;
    std::memcpy(
        dst + r * inner, src, static_cast<size_t>(inner) * sizeof(float));
  }
  return true;
}

} // namespace

Tensor& opt_eq_scalar_out(KernelRuntimeContext& ctx,
                          const Tensor& self,
                          const Scalar& other,
                          Tensor& out) {
  if (!eq_scalar_fast(ctx, self, other, out)) {
    eq_scalar_out(ctx, self, other, out);
  }
  return out;
}

Tensor& opt_logical_not_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            Tensor& out) {
  if (!logical_not_fast(ctx, self, out)) {
    logical_not_out(ctx, self, out);
  }
  return out;
}

Tensor& opt_any_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    int64_t dim,
                    bool keepdim,
                    Tensor& out) {
  if (!any_last_dim_fast(ctx, self, dim, keepdim, out)) {
    any_out(ctx, self, dim, keepdim, out);
  }
  return out;
}

Tensor& opt_where_self_out(KernelRuntimeContext& ctx,
                           const Tensor& condition,
                           const Tensor& self,
                           const Tensor& other,
                           Tensor& out) {
  if (!where_fast(ctx, condition, self, other, out)) {
    where_self_out(ctx, condition, self, other, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
