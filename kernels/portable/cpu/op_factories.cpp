// Tensors made from sizes or values: empty, empty_strided, full,
// full_like, ones, zeros, scalar_tensor, fill (Scalar and 0-dim Tensor)
// and arange. (Random factories are in op_random.cpp.)

#include <cmath>

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Writes `value` to every element of out.
void fill_with(KernelRuntimeContext& ctx,
               const char* op,
               const Scalar& value,
               const Tensor& out) {
  ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, CTYPE, [&] {
    const CTYPE v = value.to<CTYPE>();
    CTYPE* data = out.mutable_data_ptr<CTYPE>();
    for (ssize_t i = 0; i < out.numel(); ++i) {
      data[i] = v;
    }
  });
}

} // namespace

// empty: only the shape matters; the contents are unspecified.
Tensor& empty_out(KernelRuntimeContext& ctx,
                  IntArrayRef size,
                  std::optional<int64_t> memory_format,
                  Tensor& out) {
  (void)memory_format;
  Shape shape;
  if (shape_from_sizes(ctx, "empty.out", size, &shape)) {
    resize_out(ctx, "empty.out", "out", out, shape.ref());
  }
  return out;
}

Tensor& empty_strided_out(KernelRuntimeContext& ctx,
                          IntArrayRef size,
                          IntArrayRef stride,
                          Tensor& out) {
  (void)stride; // out's dim order decides the layout
  return empty_out(ctx, size, std::nullopt, out);
}

Tensor& full_out(KernelRuntimeContext& ctx,
                 IntArrayRef size,
                 const Scalar& fill_value,
                 Tensor& out) {
  const char* op = "full.out";
  Shape shape;
  if (shape_from_sizes(ctx, op, size, &shape) &&
      resize_out(ctx, op, "out", out, shape.ref())) {
    fill_with(ctx, op, fill_value, out);
  }
  return out;
}

Tensor& full_like_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      const Scalar& fill_value,
                      std::optional<int64_t> memory_format,
                      Tensor& out) {
  (void)memory_format; // out's dim order is the layout
  if (resize_like(ctx, "full_like.out", out, self)) {
    fill_with(ctx, "full_like.out", fill_value, out);
  }
  return out;
}

Tensor& ones_out(KernelRuntimeContext& ctx, IntArrayRef size, Tensor& out) {
  return full_out(ctx, size, Scalar(int64_t(1)), out);
}

Tensor& zeros_out(KernelRuntimeContext& ctx, IntArrayRef size, Tensor& out) {
  return full_out(ctx, size, Scalar(int64_t(0)), out);
}

Tensor& scalar_tensor_out(KernelRuntimeContext& ctx,
                          const Scalar& s,
                          Tensor& out) {
  if (resize_out(ctx, "scalar_tensor.out", "out", out, {})) {
    fill_with(ctx, "scalar_tensor.out", s, out);
  }
  return out;
}

Tensor& fill_scalar_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Scalar& value,
                        Tensor& out) {
  if (resize_like(ctx, "fill.Scalar_out", out, self)) {
    fill_with(ctx, "fill.Scalar_out", value, out);
  }
  return out;
}

Tensor& fill_tensor_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Tensor& value,
                        Tensor& out) {
  const char* op = "fill.Tensor_out";
  if (value.dim() != 0 || !resize_like(ctx, op, out, self)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "value must be a 0-dim tensor");
    }
    return out;
  }
  // Broadcasting the 0-dim value over out converts it to out's dtype.
  View view = tensor_view(out);
  for (size_t d = 0; d < view.shape.ndim; ++d) {
    view.strides[d] = 0;
  }
  copy_view(ctx, op, value, view, out);
  return out;
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
