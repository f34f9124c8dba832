// The view family as copies: view, permute, transpose, t, expand,
// unsqueeze, squeeze, select and slice. Each describes the View its
// output reads and lets copy_view() do the copy.

#include <cinttypes>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Copies `self` reshaped to `shape` (row-major logical order is kept).
// self may have any dim order (a channels-last clone before a flatten):
// its elements are then read in logical order and written to out's.
Tensor& reshape_copy(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     const Shape& shape,
                     Tensor& out) {
  if (!::executorch::runtime::tensor_is_contiguous(out)) {
    fail_arg(ctx, op, "out must have the default dim order");
    return out;
  }
  if (::executorch::runtime::tensor_is_contiguous(self)) {
    copy_view(ctx, op, self, reshape_view(shape), out);
  } else if (resize_out(ctx, op, "out", out, shape.ref())) {
    const View in = tensor_view(self);
    copy_strided(ctx, op, self, in, out, reshape_view(in.shape));
  }
  return out;
}

} // namespace

Tensor& view_copy_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      IntArrayRef size,
                      Tensor& out) {
  Shape shape;
  if (infer_size(ctx, "view_copy.out", size, self.numel(), &shape)) {
    reshape_copy(ctx, "view_copy.out", self, shape, out);
  }
  return out;
}

Tensor& unsqueeze_copy_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           int64_t dim,
                           Tensor& out) {
  const char* op = "unsqueeze_copy.out";
  int64_t d = 0;
  if (!normalize_dim(ctx, op, dim, self.dim() + 1, &d)) {
    return out;
  }
  Shape shape;
  for (int64_t i = 0; i <= self.dim(); ++i) {
    shape.push_back(i == d ? 1 : self.size(i < d ? i : i - 1));
  }
  return reshape_copy(ctx, op, self, shape, out);
}

Tensor& squeeze_copy_dims_out(KernelRuntimeContext& ctx,
                              const Tensor& self,
                              IntArrayRef dims,
                              Tensor& out) {
  const char* op = "squeeze_copy.dims_out";
  bool squeeze[kMaxDims] = {};
  for (int64_t dim : dims) {
    int64_t d = 0;
    if (!normalize_dim(ctx, op, dim, self.dim(), &d)) {
      return out;
    }
    squeeze[d] = self.dim() > 0 && self.size(d) == 1;
  }
  Shape shape;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (!squeeze[i]) {
      shape.push_back(self.size(i));
    }
  }
  return reshape_copy(ctx, op, self, shape, out);
}

Tensor& squeeze_copy_dim_out(KernelRuntimeContext& ctx,
                             const Tensor& self,
                             int64_t dim,
                             Tensor& out) {
  return squeeze_copy_dims_out(ctx, self, IntArrayRef(&dim, 1), out);
}

Tensor& permute_copy_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         IntArrayRef dims,
                         Tensor& out) {
  const char* op = "permute_copy.out";
  if (static_cast<ssize_t>(dims.size()) != self.dim()) {
    fail_arg(ctx,
             op,
             "dims has %zu entries for a rank-%zd tensor",
             dims.size(),
             static_cast<ssize_t>(self.dim()));
    return out;
  }
  const View in = tensor_view(self);
  View view;
  bool seen[kMaxDims] = {};
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = 0;
    if (!normalize_dim(ctx, op, dims[i], self.dim(), &d)) {
      return out;
    }
    if (seen[d]) {
      fail_arg(ctx, op, "dim %" PRId64 " appears twice in dims", d);
      return out;
    }
    seen[d] = true;
    view.shape.push_back(in.shape.sizes[d]);
    view.strides[i] = in.strides[d];
  }
  copy_view(ctx, op, self, view, out);
  return out;
}

Tensor& transpose_copy_int_out(KernelRuntimeContext& ctx,
                               const Tensor& self,
                               int64_t dim0,
                               int64_t dim1,
                               Tensor& out) {
  const char* op = "transpose_copy.int_out";
  int64_t a = 0;
  int64_t b = 0;
  if (!normalize_dim(ctx, op, dim0, self.dim(), &a) ||
      !normalize_dim(ctx, op, dim1, self.dim(), &b)) {
    return out;
  }
  View view = tensor_view(self);
  if (self.dim() > 0) {
    std::swap(view.shape.sizes[a], view.shape.sizes[b]);
    std::swap(view.strides[a], view.strides[b]);
  }
  copy_view(ctx, op, self, view, out);
  return out;
}

Tensor& t_copy_out(KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) {
  if (self.dim() > 2) {
    fail_arg(ctx, "t_copy.out", "self must have at most 2 dims");
    return out;
  }
  return transpose_copy_int_out(ctx, self, 0, self.dim() < 2 ? 0 : 1, out);
}

Tensor& expand_copy_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        IntArrayRef size,
                        bool implicit,
                        Tensor& out) {
  const char* op = "expand_copy.out";
  (void)implicit;
  const int64_t rank = static_cast<int64_t>(size.size());
  if (rank < self.dim() || rank > static_cast<int64_t>(kMaxDims)) {
    fail_arg(ctx,
             op,
             "cannot expand a rank-%zd tensor to %" PRId64 " dims",
             static_cast<ssize_t>(self.dim()),
             rank);
    return out;
  }
  const View in = tensor_view(self);
  View view;
  const int64_t lead = rank - self.dim();
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t own = i < lead ? 1 : in.shape.sizes[i - lead];
    const int64_t want = size[i] == -1 ? own : size[i];
    if (size[i] == -1 && i < lead) {
      fail_arg(ctx, op, "-1 is not allowed for a new leading dim %" PRId64, i);
      return out;
    }
    if (own != want && own != 1) {
      fail_arg(ctx,
               op,
               "dim %" PRId64 " of size %" PRId64 " cannot expand to %" PRId64,
               i,
               own,
               want);
      return out;
    }
    view.shape.push_back(want);
    view.strides[i] = (i < lead || own != want) ? 0 : in.strides[i - lead];
  }
  copy_view(ctx, op, self, view, out);
  return out;
}

Tensor& select_copy_int_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            int64_t dim,
                            int64_t index,
                            Tensor& out) {
  const char* op = "select_copy.int_out";
  int64_t d = 0;
  if (self.dim() == 0) {
    fail_arg(ctx, op, "cannot select from a 0-dim tensor");
    return out;
  }
  if (!normalize_dim(ctx, op, dim, self.dim(), &d)) {
    return out;
  }
  const int64_t size = self.size(d);
  if (index < -size || index >= size) {
    fail_arg(ctx,
             op,
             "index %" PRId64 " is out of range for size %" PRId64,
             index,
             size);
    return out;
  }
  View view = tensor_view(self);
  view.offset = (index < 0 ? index + size : index) * view.strides[d];
  drop_dim(&view, static_cast<size_t>(d));
  copy_view(ctx, op, self, view, out);
  return out;
}

Tensor& slice_copy_tensor_out(KernelRuntimeContext& ctx,
                              const Tensor& self,
                              int64_t dim,
                              std::optional<int64_t> start,
                              std::optional<int64_t> end,
                              int64_t step,
                              Tensor& out) {
  const char* op = "slice_copy.Tensor_out";
  int64_t d = 0;
  if (self.dim() == 0) {
    fail_arg(ctx, op, "cannot slice a 0-dim tensor");
    return out;
  }
  if (!normalize_dim(ctx, op, dim, self.dim(), &d)) {
    return out;
  }
  if (step <= 0) {
    fail_arg(ctx, op, "step must be positive, got %" PRId64, step);
    return out;
  }
  // Python slice bounds: negatives count from the end, then clamp.
  const int64_t size = self.size(d);
  auto clamp_bound = [size](int64_t v) {
    v = v < 0 ? v + size : v;
    return v < 0 ? 0 : (v > size ? size : v);
  };
  const int64_t first = clamp_bound(start.value_or(0));
  const int64_t last = clamp_bound(end.value_or(size));
  // Neither may overflow for a step near 2^63: the count is 1 + the steps
  // that fit after the first element, and with two or more the step is
  // below the dim's size, so stride * step stays inside the tensor.
  const int64_t count = last > first ? 1 + (last - first - 1) / step : 0;
  View view = tensor_view(self);
  view.offset = first * view.strides[d];
  view.shape.sizes[d] = static_cast<SizesType>(count);
  if (count > 1) {
    view.strides[d] *= step;
  }
  copy_view(ctx, op, self, view, out);
  return out;
}

Tensor& narrow_copy_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        int64_t dim,
                        int64_t start,
                        int64_t length,
                        Tensor& out) {
  const char* op = "narrow_copy.out";
  int64_t d = 0;
  if (self.dim() == 0 || !normalize_dim(ctx, op, dim, self.dim(), &d)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "cannot narrow a 0-dim tensor");
    }
    return out;
  }
  const int64_t size = self.size(d);
  const int64_t first = start < 0 ? start + size : start;
  if (first < 0 || length < 0 || first + length > size) {
    fail_arg(ctx,
             op,
             "start %" PRId64 " and length %" PRId64
             " do not fit a dim of size %" PRId64,
             start,
             length,
             size);
    return out;
  }
  View view = tensor_view(self);
  view.offset = first * view.strides[d];
  view.shape.sizes[d] = static_cast<SizesType>(length);
  copy_view(ctx, op, self, view, out);
  return out;
}

// diagonal(offset, dim1, dim2): dim1 and dim2 are replaced by one last dim
// that steps along both at once.
Tensor& diagonal_copy_out(KernelRuntimeContext& ctx,
                          const Tensor& self,
                          int64_t offset,
                          int64_t dim1,
                          int64_t dim2,
                          Tensor& out) {
  const char* op = "diagonal_copy.out";
  int64_t a = 0;
  int64_t b = 0;
  if (self.dim() < 2 || !normalize_dim(ctx, op, dim1, self.dim(), &a) ||
      !normalize_dim(ctx, op, dim2, self.dim(), &b) || a == b) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "needs two distinct dims of a tensor of rank >= 2");
    }
    return out;
  }
  const View in = tensor_view(self);
  const int64_t rows = offset >= 0 ? self.size(a) : self.size(a) + offset;
  const int64_t cols = offset >= 0 ? self.size(b) - offset : self.size(b);
  int64_t length = rows < cols ? rows : cols;
  length = length < 0 ? 0 : length;
  View view;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != a && d != b) {
      view.strides[view.shape.ndim] = in.strides[d];
      view.shape.push_back(self.size(d));
    }
  }
  view.strides[view.shape.ndim] = in.strides[a] + in.strides[b];
  view.shape.push_back(length);
  if (length > 0) {
    view.offset =
        offset >= 0 ? offset * in.strides[b] : -offset * in.strides[a];
  }
  copy_view(ctx, op, self, view, out);
  return out;
}

// unfold(dimension, size, step): windows of `size` along `dimension`
// become a new last dim.
Tensor& unfold_copy_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        int64_t dimension,
                        int64_t size,
                        int64_t step,
                        Tensor& out) {
  const char* op = "unfold_copy.out";
  int64_t d = 0;
  if (!normalize_dim(ctx, op, dimension, self.dim(), &d)) {
    return out;
  }
  const int64_t extent = self.dim() == 0 ? 1 : self.size(d);
  if (size < 0 || size > extent || step <= 0 ||
      self.dim() + 1 > static_cast<ssize_t>(kMaxDims)) {
    fail_arg(ctx,
             op,
             "size %" PRId64 " and step %" PRId64
             " do not fit a dim of size %" PRId64,
             size,
             step,
             extent);
    return out;
  }
  View view = tensor_view(self);
  const int64_t stride = self.dim() == 0 ? 1 : view.strides[d];
  if (self.dim() > 0) {
    view.shape.sizes[d] = static_cast<SizesType>((extent - size) / step + 1);
    view.strides[d] = stride * step;
  }
  view.strides[view.shape.ndim] = stride;
  view.shape.push_back(size);
  copy_view(ctx, op, self, view, out);
  return out;
}

void split_copy_tensor_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           int64_t split_size,
                           int64_t dim,
                           ArrayRef<Tensor> out) {
  const char* op = "split_copy.Tensor_out";
  int64_t d = 0;
  if (self.dim() == 0 || split_size < 0 ||
      !normalize_dim(ctx, op, dim, self.dim(), &d)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "needs a tensor with dims and a split_size >= 0");
    }
    return;
  }
  const int64_t size = self.size(d);
  const int64_t pieces =
      split_size == 0 ? 1 : (size + split_size - 1) / split_size;
  if (static_cast<int64_t>(out.size()) != (size == 0 ? 1 : pieces)) {
    fail_arg(
        ctx, op, "%zu out tensors for %" PRId64 " pieces", out.size(), pieces);
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t start = static_cast<int64_t>(i) * split_size;
    const int64_t length = std::min(split_size, size - start);
    Tensor piece = out[i]; // a handle; the data is out[i]'s
    narrow_copy_out(ctx, self, d, start, length, piece);
    if (ctx.failure_state() != Error::Ok) {
      return;
    }
  }
}

// as_strided: reads self's storage through explicit sizes, strides and
// offset. Every element it can reach must lie within self's elements.
Tensor& as_strided_copy_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            IntArrayRef size,
                            IntArrayRef stride,
                            std::optional<int64_t> storage_offset,
                            Tensor& out) {
  const char* op = "as_strided_copy.out";
  if (size.size() != stride.size() || size.size() > kMaxDims) {
    fail_arg(ctx, op, "size and stride must have the same length");
    return out;
  }
  View view;
  view.offset = storage_offset.value_or(0);
  int64_t last = view.offset;
  bool empty = false;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] < 0 || stride[d] < 0) {
      fail_arg(ctx, op, "sizes and strides must not be negative");
      return out;
    }
    empty = empty || size[d] == 0;
    last += (size[d] - 1) * stride[d];
    view.shape.push_back(size[d]);
    view.strides[d] = stride[d];
  }
  if (!empty && (view.offset < 0 || last >= self.numel())) {
    fail_arg(ctx,
             op,
             "the view reaches element %" PRId64
             " of a tensor with %zd elements",
             last,
             static_cast<ssize_t>(self.numel()));
    return out;
  }
  if (check_default_dim_order(ctx, op, {&self})) {
    copy_view(ctx, op, self, view, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
