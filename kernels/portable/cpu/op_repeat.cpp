// Repetition: repeat (tiles self along every dim) and
// repeat_interleave (each index repeated a given number of times).

#include <cinttypes>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

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

// repeat_interleave(repeats): index i repeated repeats[i] times.
Tensor& repeat_interleave_tensor_out(KernelRuntimeContext& ctx,
                                     const Tensor& repeats,
                                     std::optional<int64_t> output_size,
                                     Tensor& out) {
  const char* op = "repeat_interleave.Tensor_out";
  if (repeats.dim() > 1 || !check_same_dtype(ctx, op, "out", out, repeats)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "repeats must be 0-d or 1-d");
    }
    return out;
  }
  ET_SWITCH_INT_TYPES(repeats.scalar_type(), ctx, op, T, [&] {
    const T* r = repeats.const_data_ptr<T>();
    int64_t total = 0;
    for (ssize_t i = 0; i < repeats.numel(); ++i) {
      if (r[i] < 0) {
        fail_arg(ctx, op, "repeats must not be negative");
        return;
      }
      total += r[i];
    }
    if (output_size.has_value() && *output_size != total) {
      fail_arg(ctx,
               op,
               "output_size %" PRId64
               " differs from the sum of "
               "repeats %" PRId64,
               *output_size,
               total);
      return;
    }
    Shape shape;
    shape.push_back(total);
    if (!resize_out(ctx, op, "out", out, shape.ref())) {
      return;
    }
    T* o = out.mutable_data_ptr<T>();
    for (ssize_t i = 0; i < repeats.numel(); ++i) {
      for (T k = 0; k < r[i]; ++k) {
        *o++ = static_cast<T>(i);
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
