// Kernels that rearrange elements through strided index spaces: flip,
// roll, repeat, stack, unbind, constant_pad_nd, pixel_shuffle, tril/triu
// and arange.

#include <cinttypes>
#include <cmath>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// The View of out that selects `index` along `dim`.
View select_region(const Tensor& out, int64_t dim, int64_t index) {
  View region = tensor_view(out);
  region.offset = index * region.strides[dim];
  drop_dim(&region, static_cast<size_t>(dim));
  return region;
}

// Keeps the elements on one side of a diagonal of the last two dims and
// zeroes the others.
Tensor& triangle(KernelRuntimeContext& ctx,
                 const char* op,
                 const Tensor& self,
                 int64_t diagonal,
                 Tensor& out,
                 bool lower) {
  if (self.dim() < 2) {
    fail_arg(ctx, op, "self must have at least 2 dims");
    return out;
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  if (ctx.failure_state() != Error::Ok ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  const int64_t rows = out.size(-2);
  const int64_t cols = out.size(-1);
  const int64_t matrices = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  const size_t elem = out.element_size();
  char* data = static_cast<char*>(out.mutable_data_ptr());
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const bool keep = lower ? c - r <= diagonal : c - r >= diagonal;
        if (!keep) {
          std::memset(data + ((m * rows + r) * cols + c) * elem, 0, elem);
        }
      }
    }
  }
  return out;
}

} // namespace

Tensor& flip_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 IntArrayRef dims,
                 Tensor& out) {
  const char* op = "flip.out";
  View view = tensor_view(self);
  bool flipped[kMaxDims] = {};
  for (int64_t dim : dims) {
    int64_t d = 0;
    if (!normalize_dim(ctx, op, dim, self.dim(), &d)) {
      return out;
    }
    if (self.dim() == 0 || flipped[d]) {
      continue;
    }
    flipped[d] = true;
    // Start at the last element along d and walk backwards.
    view.offset += (view.shape.sizes[d] - 1) * view.strides[d];
    view.strides[d] = -view.strides[d];
  }
  if (self.numel() == 0) {
    view.offset = 0;
  }
  copy_view(ctx, op, self, view, out);
  return out;
}

Tensor& roll_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 IntArrayRef shifts,
                 IntArrayRef dims,
                 Tensor& out) {
  const char* op = "roll.out";
  if (dims.size() == 0) {
    // Roll the flattened tensor: one rotation of the linear order.
    if (shifts.size() != 1 || !check_default_dim_order(ctx, op, {&self})) {
      if (ctx.failure_state() == Error::Ok) {
        fail_arg(ctx, op, "without dims, exactly one shift is expected");
      }
      return out;
    }
  } else if (shifts.size() != dims.size()) {
    fail_arg(ctx, op, "shifts and dims must have the same length");
    return out;
  }
  if (!resize_like(ctx, op, out, self) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self, &out}) || self.numel() == 0) {
    return out;
  }
  // out[(i + shift) mod n] = self[i].
  int64_t shift_of[kMaxDims] = {};
  if (dims.size() == 0) {
    const int64_t n = self.numel();
    const int64_t s = ((shifts[0] % n) + n) % n;
    const size_t elem = self.element_size();
    const char* in = static_cast<const char*>(self.const_data_ptr());
    char* o = static_cast<char*>(out.mutable_data_ptr());
    std::memcpy(o + s * elem, in, (n - s) * elem);
    std::memcpy(o, in + (n - s) * elem, s * elem);
    return out;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = 0;
    if (!normalize_dim(ctx, op, dims[i], self.dim(), &d)) {
      return out;
    }
    shift_of[d] += shifts[i];
  }
  // Each output element finds its source coordinate dim by dim (rolls along
  // several dims do not reduce to a few block copies).
  int64_t strides[kMaxDims];
  tensor_strides(self, strides);
  const size_t elem = self.element_size();
  const char* in = static_cast<const char*>(self.const_data_ptr());
  char* o = static_cast<char*>(out.mutable_data_ptr());
  int64_t counter[kMaxDims] = {};
  for (int64_t i = 0; i < self.numel(); ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < self.dim(); ++d) {
      const int64_t n = self.size(d);
      const int64_t c = ((counter[d] - shift_of[d]) % n + n) % n;
      src += c * strides[d];
    }
    std::memcpy(o + i * elem, in + src * elem, elem);
    for (int64_t d = self.dim() - 1; d >= 0; --d) {
      if (++counter[d] < self.size(d)) {
        break;
      }
      counter[d] = 0;
    }
  }
  return out;
}

// repeat: out has shape repeats * self's shape (self's shape padded with
// leading 1s). Each out dim splits into (copy index, position) dims; the
// copy index dims read self with stride 0.
Tensor& repeat_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   IntArrayRef repeats,
                   Tensor& out) {
  const char* op = "repeat.out";
  const int64_t rank = static_cast<int64_t>(repeats.size());
  if (rank < self.dim() || 2 * rank > static_cast<int64_t>(kMaxDims)) {
    fail_arg(ctx,
             op,
             "repeats must have between %zd and %zu entries",
             static_cast<ssize_t>(self.dim()),
             kMaxDims / 2);
    return out;
  }
  const View in = tensor_view(self);
  const int64_t lead = rank - self.dim();
  Shape out_shape;
  View source;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t size = i < lead ? 1 : in.shape.sizes[i - lead];
    if (repeats[i] < 0) {
      fail_arg(ctx, op, "negative repeat %" PRId64, repeats[i]);
      return out;
    }
    out_shape.push_back(repeats[i] * size);
    source.shape.push_back(repeats[i]);
    source.shape.push_back(size);
    source.strides[2 * i] = 0;
    source.strides[2 * i + 1] = i < lead ? 0 : in.strides[i - lead];
  }
  if (!resize_out(ctx, op, "out", out, out_shape.ref()) ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  const View out_view = tensor_view(out);
  View dest;
  dest.shape = source.shape;
  for (int64_t i = 0; i < rank; ++i) {
    dest.strides[2 * i] = source.shape.sizes[2 * i + 1] * out_view.strides[i];
    dest.strides[2 * i + 1] = out_view.strides[i];
  }
  copy_strided(ctx, op, self, source, out, dest);
  return out;
}

Tensor& stack_out(KernelRuntimeContext& ctx,
                  ArrayRef<Tensor> tensors,
                  int64_t dim,
                  Tensor& out) {
  const char* op = "stack.out";
  if (tensors.size() == 0) {
    fail_arg(ctx, op, "needs at least one tensor");
    return out;
  }
  int64_t d = 0;
  if (!normalize_dim(ctx, op, dim, tensors[0].dim() + 1, &d)) {
    return out;
  }
  Shape shape;
  for (int64_t k = 0; k <= tensors[0].dim(); ++k) {
    shape.push_back(k == d ? static_cast<int64_t>(tensors.size())
                           : tensors[0].size(k < d ? k : k - 1));
  }
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].sizes() != tensors[0].sizes()) {
      fail_arg(ctx, op, "tensor %zu has a different shape from tensor 0", i);
      return out;
    }
    copy_strided(ctx,
                 op,
                 tensors[i],
                 tensor_view(tensors[i]),
                 out,
                 select_region(out, d, static_cast<int64_t>(i)));
    if (ctx.failure_state() != Error::Ok) {
      break;
    }
  }
  return out;
}

void unbind_copy_int_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         int64_t dim,
                         ArrayRef<Tensor> out) {
  const char* op = "unbind_copy.int_out";
  int64_t d = 0;
  if (self.dim() == 0 || !normalize_dim(ctx, op, dim, self.dim(), &d)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "cannot unbind a 0-dim tensor");
    }
    return;
  }
  if (static_cast<int64_t>(out.size()) != self.size(d)) {
    fail_arg(ctx,
             op,
             "%zu out tensors for a dim of size %zd",
             out.size(),
             static_cast<ssize_t>(self.size(d)));
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    copy_view(
        ctx, op, self, select_region(self, d, static_cast<int64_t>(i)), out[i]);
    if (ctx.failure_state() != Error::Ok) {
      return;
    }
  }
}

// constant_pad_nd: pad (or crop, for negative pads) the trailing dims;
// pad lists (before, after) pairs starting from the last dim.
Tensor& constant_pad_nd_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            IntArrayRef pad,
                            const Scalar& value,
                            Tensor& out) {
  const char* op = "constant_pad_nd.out";
  if (pad.size() % 2 != 0 ||
      static_cast<int64_t>(pad.size() / 2) > self.dim()) {
    fail_arg(ctx,
             op,
             "pad must hold (before, after) pairs for at most "
             "%zd dims",
             static_cast<ssize_t>(self.dim()));
    return out;
  }
  View source = tensor_view(self);
  Shape shape = source.shape;
  int64_t before[kMaxDims] = {};
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i);
    const int64_t lo = pad[2 * i];
    const int64_t hi = pad[2 * i + 1];
    const int64_t size = self.size(d) + lo + hi;
    if (size < 0) {
      fail_arg(ctx, op, "padding makes dim %" PRId64 " negative", d);
      return out;
    }
    shape.sizes[d] = static_cast<SizesType>(size);
    before[d] = lo;
    // Negative pads crop self; the kept part starts -lo elements in.
    const int64_t kept = self.size(d) + (lo < 0 ? lo : 0) + (hi < 0 ? hi : 0);
    source.offset += (lo < 0 ? -lo : 0) * source.strides[d];
    source.shape.sizes[d] = static_cast<SizesType>(kept > 0 ? kept : 0);
  }
  if (!resize_out(ctx, op, "out", out, shape.ref()) ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, T, [&] {
    const T v = value.to<T>();
    T* data = out.mutable_data_ptr<T>();
    for (ssize_t i = 0; i < out.numel(); ++i) {
      data[i] = v;
    }
  });
  if (source.shape.numel() == 0) {
    return out;
  }
  View dest = tensor_view(out);
  dest.shape = source.shape;
  for (size_t d = 0; d < shape.ndim; ++d) {
    dest.offset += (before[d] > 0 ? before[d] : 0) * dest.strides[d];
  }
  copy_strided(ctx, op, self, source, out, dest);
  return out;
}

namespace {

// Copies self through a 6-d index space whose order is out's row-major
// order: `sizes` and self's `strides` per index dim.
Tensor& shuffle_copy(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     const int64_t (&sizes)[6],
                     const int64_t (&strides)[6],
                     const Shape& out_shape,
                     Tensor& out) {
  View source;
  for (int k = 0; k < 6; ++k) {
    source.shape.push_back(sizes[k]);
    source.strides[k] = strides[k];
  }
  if (resize_out(ctx, op, "out", out, out_shape.ref()) &&
      check_default_dim_order(ctx, op, {&out})) {
    copy_strided(ctx, op, self, source, out, reshape_view(source.shape));
  }
  return out;
}

} // namespace

// pixel_shuffle: [N, C*r*r, H, W] -> [N, C, H*r, W*r], out[n][c][h*r+i][w*r+j]
// = in[n][c*r*r + i*r + j][h][w]; walked as (n, c, h, i, w, j).
Tensor& pixel_shuffle_out(KernelRuntimeContext& ctx,
                          const Tensor& self,
                          int64_t upscale_factor,
                          Tensor& out) {
  const char* op = "pixel_shuffle.out";
  const int64_t r = upscale_factor;
  if (self.dim() != 4 || r <= 0 || self.size(1) % (r * r) != 0) {
    fail_arg(
        ctx, op, "needs a 4-d input whose channels divide by %" PRId64, r * r);
    return out;
  }
  const View in = tensor_view(self);
  const int64_t c = self.size(1) / (r * r);
  Shape shape;
  shape.push_back(self.size(0));
  shape.push_back(c);
  shape.push_back(self.size(2) * r);
  shape.push_back(self.size(3) * r);
  return shuffle_copy(ctx,
                      op,
                      self,
                      {self.size(0), c, self.size(2), r, self.size(3), r},
                      {in.strides[0],
                       r * r * in.strides[1],
                       in.strides[2],
                       r * in.strides[1],
                       in.strides[3],
                       in.strides[1]},
                      shape,
                      out);
}

// pixel_unshuffle, the inverse: [N, C, H*r, W*r] -> [N, C*r*r, H, W];
// walked as (n, c, i, j, h, w).
Tensor& pixel_unshuffle_out(KernelRuntimeContext& ctx,
                            const Tensor& self,
                            int64_t downscale_factor,
                            Tensor& out) {
  const char* op = "pixel_unshuffle.out";
  const int64_t r = downscale_factor;
  if (self.dim() != 4 || r <= 0 || self.size(2) % r != 0 ||
      self.size(3) % r != 0) {
    fail_arg(ctx,
             op,
             "needs a 4-d input whose height and width divide by "
             "%" PRId64,
             r);
    return out;
  }
  const View in = tensor_view(self);
  const int64_t h = self.size(2) / r, w = self.size(3) / r;
  Shape shape;
  shape.push_back(self.size(0));
  shape.push_back(self.size(1) * r * r);
  shape.push_back(h);
  shape.push_back(w);
  return shuffle_copy(ctx,
                      op,
                      self,
                      {self.size(0), self.size(1), r, r, h, w},
                      {in.strides[0],
                       in.strides[1],
                       in.strides[2],
                       in.strides[3],
                       r * in.strides[2],
                       r * in.strides[3]},
                      shape,
                      out);
}

Tensor& tril_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 int64_t diagonal,
                 Tensor& out) {
  return triangle(ctx, "tril.out", self, diagonal, out, /*lower=*/true);
}

Tensor& triu_out(KernelRuntimeContext& ctx,
                 const Tensor& self,
                 int64_t diagonal,
                 Tensor& out) {
  return triangle(ctx, "triu.out", self, diagonal, out, /*lower=*/false);
}

Tensor& arange_start_out(KernelRuntimeContext& ctx,
                         const Scalar& start,
                         const Scalar& end,
                         const Scalar& step,
                         Tensor& out) {
  const char* op = "arange.start_out";
  const double s = start.to<double>();
  const double e = end.to<double>();
  const double st = step.to<double>();
  if (st == 0 || (st > 0 && e < s) || (st < 0 && e > s)) {
    fail_arg(ctx, op, "step must be non-zero and point from start to end");
    return out;
  }
  Shape shape;
  shape.push_back(static_cast<int64_t>(std::ceil((e - s) / st)));
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  ET_SWITCH_REALHBF16_TYPES(out.scalar_type(), ctx, op, T, [&] {
    T* data = out.mutable_data_ptr<T>();
    for (ssize_t i = 0; i < out.numel(); ++i) {
      data[i] = internal::convert<T>(s + st * static_cast<double>(i));
    }
  });
  return out;
}

Tensor& arange_out(KernelRuntimeContext& ctx, const Scalar& end, Tensor& out) {
  return arange_start_out(
      ctx, Scalar(int64_t(0)), end, Scalar(int64_t(1)), out);
}

} // namespace native
} // namespace executor
} // namespace torch
