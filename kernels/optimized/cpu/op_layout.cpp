// Layout copies: permute_copy, transpose_copy and clone into a contiguous
// out of the input's dtype, by copy_strided_to_contiguous (memcpy of rows,
// or a tiled transpose, threaded). The portable kernels convert element by
// element through a generic index walk; a linear's weight transpose
// ([out, in] -> [in, out] before addmm) is where that shows. Other dtypes
// pairs, out dim orders and every bad argument go to the portable kernels.

#include <executorch/kernels/optimized/cpu/strided_copy.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/kernels/portable/util/elementwise.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::copy_strided_to_contiguous;

// Copies `self` read through `order` (out dim i is self's dim order[i])
// into `out` after resizing it; false when the fast path does not apply
// (the caller runs the portable kernel, which resizes again and copies).
bool copy_permuted(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& self,
                   const int64_t* order,
                   Tensor& out) {
  const size_t rank = self.dim();
  if (self.scalar_type() != out.scalar_type() ||
      static_cast<size_t>(out.dim()) != rank || rank > kMaxDims) {
    return false;
  }
  int64_t self_strides[kMaxDims];
  tensor_strides(self, self_strides);
  ::executorch::aten::SizesType sizes[kMaxDims];
  int64_t sizes64[kMaxDims];
  int64_t strides[kMaxDims];
  for (size_t i = 0; i < rank; ++i) {
    sizes[i] = self.size(order[i]);
    sizes64[i] = sizes[i];
    strides[i] = self_strides[order[i]];
  }
  if (!resize_out(
          ctx, op, "out", out, ArrayRef<::executorch::aten::SizesType>(sizes, rank))) {
    return true; // the context says why
  }
  if (!::executorch::runtime::tensor_is_contiguous(out)) {
    return false;
  }
  return copy_strided_to_contiguous(self.const_data_ptr(),
                                    strides,
                                    sizes64,
                                    rank,
                                    self.element_size(),
                                    out.mutable_data_ptr());
}

// dims[i] normalized into order[i]; false unless dims is a permutation of
// [0, rank).
bool as_permutation(IntArrayRef dims, int64_t rank, int64_t* order) {
  if (static_cast<int64_t>(dims.size()) != rank || rank > kMaxDims) {
    return false;
  }
  bool seen[kMaxDims] = {};
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
    if (d < 0 || d >= rank || seen[d]) {
      return false;
    }
    seen[d] = true;
    order[i] = d;
  }
  return true;
}

} // namespace

Tensor& opt_permute_copy_out(KernelRuntimeContext& ctx,
                             const Tensor& self,
                             IntArrayRef dims,
                             Tensor& out) {
  int64_t order[kMaxDims];
  if (!as_permutation(dims, self.dim(), order) ||
      !copy_permuted(ctx, "permute_copy.out", self, order, out)) {
    permute_copy_out(ctx, self, dims, out);
  }
  return out;
}

Tensor& opt_transpose_copy_int_out(KernelRuntimeContext& ctx,
                                   const Tensor& self,
                                   int64_t dim0,
                                   int64_t dim1,
                                   Tensor& out) {
  const int64_t rank = self.dim();
  // A 0-dim tensor transposes dims 0 and -1 with itself.
  const int64_t wrap = rank > 0 ? rank : 1;
  const int64_t a = dim0 < 0 ? dim0 + wrap : dim0;
  const int64_t b = dim1 < 0 ? dim1 + wrap : dim1;
  int64_t order[kMaxDims];
  bool fast = rank <= static_cast<int64_t>(kMaxDims) && a >= 0 && a < wrap &&
              b >= 0 && b < wrap;
  for (int64_t i = 0; fast && i < rank; ++i) {
    order[i] = i == a ? b : (i == b ? a : i);
  }
  if (!fast ||
      !copy_permuted(ctx, "transpose_copy.int_out", self, order, out)) {
    transpose_copy_int_out(ctx, self, dim0, dim1, out);
  }
  return out;
}

Tensor& opt_clone_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      std::optional<int64_t> memory_format,
                      Tensor& out) {
  int64_t order[kMaxDims];
  for (int64_t i = 0; i < self.dim() && i < kMaxDims; ++i) {
    order[i] = i;
  }
  if (!copy_permuted(ctx, "clone.out", self, order, out)) {
    clone_out(ctx, self, memory_format, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
