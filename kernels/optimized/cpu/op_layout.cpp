// Layout copies: permute_copy, transpose_copy, clone, expand_copy and
// select_copy into a contiguous out of the input's dtype, by
// copy_strided_to_contiguous (memcpy of rows, or a tiled transpose,
// threaded) over a strided view of the input; unsqueeze_copy and
// squeeze_copy of a contiguous input as one memcpy. The portable kernels
// convert element by element through a generic index walk; a linear's
// weight transpose ([out, in] -> [in, out] before addmm) is where that
// shows. Other dtypes pairs, out dim orders and every bad argument go to
// the portable kernels.

#include <cstring>

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

// Copies the view of `self` with these sizes and element strides,
// starting `offset` elements into its data, into `out` after resizing it;
// false when the fast path does not apply (the caller runs the portable
// kernel, which resizes again and copies).
bool copy_view(KernelRuntimeContext& ctx,
               const char* op,
               const Tensor& self,
               int64_t offset,
               const int64_t* sizes64,
               const int64_t* strides,
               size_t rank,
               Tensor& out) {
  if (self.scalar_type() != out.scalar_type() ||
      static_cast<size_t>(out.dim()) != rank || rank > kMaxDims) {
    return false;
  }
  ::executorch::aten::SizesType sizes[kMaxDims];
  for (size_t i = 0; i < rank; ++i) {
    sizes[i] = static_cast<::executorch::aten::SizesType>(sizes64[i]);
  }
  if (!resize_out(
          ctx, op, "out", out, ArrayRef<::executorch::aten::SizesType>(sizes, rank))) {
    return true; // the context says why
  }
  if (!::executorch::runtime::tensor_is_contiguous(out)) {
    return false;
  }
  return copy_strided_to_contiguous(
      static_cast<const char*>(self.const_data_ptr()) +
          offset * static_cast<int64_t>(self.element_size()),
      strides,
      sizes64,
      rank,
      self.element_size(),
      out.mutable_data_ptr());
}

// `self` read through `order` (out dim i is self's dim order[i]).
bool copy_permuted(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& self,
                   const int64_t* order,
                   Tensor& out) {
  const size_t rank = self.dim();
  if (rank > kMaxDims) {
    return false;
  }
  int64_t self_strides[kMaxDims];
  tensor_strides(self, self_strides);
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
  for (size_t i = 0; i < rank; ++i) {
    sizes[i] = self.size(order[i]);
    strides[i] = self_strides[order[i]];
  }
  return copy_view(ctx, op, self, 0, sizes, strides, rank, out);
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

// `self` (default dim order) with these sizes, its elements in the same
// order, into `out` after resizing it; false when the fast path does not
// apply.
bool copy_reshaped(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& self,
                   const int64_t* sizes64,
                   int64_t rank,
                   Tensor& out) {
  if (self.scalar_type() != out.scalar_type() || out.dim() != rank ||
      !::executorch::runtime::tensor_is_contiguous(self)) {
    return false;
  }
  ::executorch::aten::SizesType sizes[kMaxDims];
  for (int64_t i = 0; i < rank; ++i) {
    sizes[i] = static_cast<::executorch::aten::SizesType>(sizes64[i]);
  }
  if (!resize_out(ctx,
                  op,
                  "out",
                  out,
                  ArrayRef<::executorch::aten::SizesType>(
                      sizes, static_cast<size_t>(rank)))) {
    return true; // the context says why
  }
  if (!::executorch::runtime::tensor_is_contiguous(out)) {
    return false;
  }
  if (self.nbytes() > 0) {
    std::memcpy(out.mutable_data_ptr(), self.const_data_ptr(), self.nbytes());
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

// A broadcast is a view with stride 0 along the expanded (and new leading)
// dims. Sizes that do not expand go to the portable kernel, which says why.
Tensor& opt_expand_copy_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            IntArrayRef size,
                            bool implicit,
                            Tensor& out) {
  const int64_t rank = static_cast<int64_t>(size.size());
  const int64_t lead = rank - self.dim();
  bool fast = lead >= 0 && rank <= static_cast<int64_t>(kMaxDims);
  int64_t self_strides[kMaxDims];
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
  if (fast) {
    tensor_strides(self, self_strides);
  }
  for (int64_t i = 0; fast && i < rank; ++i) {
    const int64_t own = i < lead ? 1 : self.size(i - lead);
    sizes[i] = size[i] == -1 && i >= lead ? own : size[i];
    fast = sizes[i] >= 0 && (own == sizes[i] || own == 1);
    strides[i] = i < lead || own != sizes[i] ? 0 : self_strides[i - lead];
  }
  if (!fast ||
      !copy_view(
          ctx, "expand_copy.out", self, 0, sizes, strides, rank, out)) {
    expand_copy_out(ctx, self, size, implicit, out);
  }
  return out;
}

// Index `index` of dim `dim`: a view without that dim, offset to the slice.
Tensor& opt_select_copy_int_out(KernelRuntimeContext& ctx,
                                const Tensor& self,
                                int64_t dim,
                                int64_t index,
                                Tensor& out) {
  const int64_t rank = self.dim();
  const int64_t d = dim < 0 ? dim + rank : dim;
  bool fast = rank > 0 && rank <= static_cast<int64_t>(kMaxDims) && d >= 0 &&
      d < rank;
  const int64_t extent = fast ? self.size(d) : 0;
  const int64_t i = index < 0 ? index + extent : index;
  fast = fast && i >= 0 && i < extent;
  int64_t self_strides[kMaxDims];
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims];
  if (fast) {
    tensor_strides(self, self_strides);
    for (int64_t k = 0, o = 0; k < rank; ++k) {
      if (k != d) {
        sizes[o] = self.size(k);
        strides[o++] = self_strides[k];
      }
    }
  }
  if (!fast ||
      !copy_view(ctx,
                 "select_copy.int_out",
                 self,
                 i * (fast ? self_strides[d] : 0),
                 sizes,
                 strides,
                 static_cast<size_t>(rank - 1),
                 out)) {
    select_copy_int_out(ctx, self, dim, index, out);
  }
  return out;
}

// unsqueeze and squeeze reshape: the elements keep their order, so a
// contiguous `self` is copied whole.
Tensor& opt_unsqueeze_copy_out(KernelRuntimeContext& ctx,
                               const Tensor& self,
                               int64_t dim,
                               Tensor& out) {
  const int64_t rank = self.dim() + 1;
  const int64_t d = dim < 0 ? dim + rank : dim;
  int64_t sizes[kMaxDims];
  const bool fast =
      rank <= static_cast<int64_t>(kMaxDims) && d >= 0 && d < rank;
  for (int64_t k = 0; fast && k < rank; ++k) {
    sizes[k] = k == d ? 1 : self.size(k < d ? k : k - 1);
  }
  if (!fast ||
      !copy_reshaped(ctx, "unsqueeze_copy.out", self, sizes, rank, out)) {
    unsqueeze_copy_out(ctx, self, dim, out);
  }
  return out;
}

// The listed dims of size 1 dropped (others kept, as PyTorch does).
Tensor& opt_squeeze_copy_dims_out(KernelRuntimeContext& ctx,
                                  const Tensor& self,
                                  IntArrayRef dims,
                                  Tensor& out) {
  const int64_t rank = self.dim();
  bool fast = rank <= static_cast<int64_t>(kMaxDims);
  bool dropped[kMaxDims] = {};
  // A 0-dim tensor squeezes dims 0 and -1 into itself.
  const int64_t wrap = rank > 0 ? rank : 1;
  for (size_t i = 0; fast && i < dims.size(); ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + wrap : dims[i];
    fast = d >= 0 && d < wrap;
    if (fast && rank > 0) {
      dropped[d] = self.size(d) == 1;
    }
  }
  int64_t sizes[kMaxDims];
  int64_t kept = 0;
  for (int64_t k = 0; fast && k < rank; ++k) {
    if (!dropped[k]) {
      sizes[kept++] = self.size(k);
    }
  }
  if (!fast ||
      !copy_reshaped(ctx, "squeeze_copy.dims_out", self, sizes, kept, out)) {
    squeeze_copy_dims_out(ctx, self, dims, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
