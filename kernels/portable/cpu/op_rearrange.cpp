// Kernels that move elements to other positions through strided index
// spaces: flip, roll, pixel_shuffle and pixel_unshuffle.

#include <cinttypes>
#include <cstring>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

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

} // namespace native
} // namespace executor
} // namespace torch
