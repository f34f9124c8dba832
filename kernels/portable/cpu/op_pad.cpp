// Padding: constant_pad_nd (or cropping, for negative pads) and
// reflection and replication padding of 1, 2 or 3 trailing dims.

#include <cstring>
#include <cinttypes>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

enum class PadMode { kReflect, kReplicate };

// Pads the last padding.size() / 2 dims of self (of rank dims + 1 or
// dims + 2: an optional batch and a channel dim in front).
Tensor& pad_impl(KernelRuntimeContext& ctx,
                 const char* op,
                 const Tensor& self,
                 IntArrayRef padding,
                 PadMode mode,
                 int64_t dims,
                 Tensor& out) {
  if (static_cast<int64_t>(padding.size()) != 2 * dims ||
      (self.dim() != dims + 1 && self.dim() != dims + 2) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self})) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx,
               op,
               "needs %" PRId64 " (left, right) pairs and a rank-%" PRId64
               " or rank-%" PRId64 " input",
               dims,
               dims + 1,
               dims + 2);
    }
    return out;
  }
  Shape shape = tensor_view(self).shape;
  int64_t before[kMaxDims] = {};
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = self.dim() - 1 - i;
    const int64_t n = self.size(d);
    const int64_t lo = padding[2 * i], hi = padding[2 * i + 1];
    const bool fits = mode == PadMode::kReflect ? (lo < n && hi < n)
                                                : (n > 0 || lo + hi == 0);
    // Negative padding crops, as in eager.
    if (n + lo + hi < 0 || !fits) {
      fail_arg(ctx,
               op,
               "padding (%" PRId64 ", %" PRId64 ") does not fit dim %" PRId64
               " of size %" PRId64,
               lo,
               hi,
               d,
               n);
      return out;
    }
    before[d] = lo;
    shape.sizes[d] = static_cast<SizesType>(n + lo + hi);
  }
  if (!resize_out(ctx, op, "out", out, shape.ref()) ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  int64_t strides[kMaxDims];
  tensor_strides(self, strides);
  const size_t elem = self.element_size();
  const char* in = static_cast<const char*>(self.const_data_ptr());
  char* o = static_cast<char*>(out.mutable_data_ptr());
  int64_t counter[kMaxDims] = {};
  for (ssize_t linear = 0; linear < out.numel(); ++linear) {
    int64_t src = 0;
    for (int64_t d = 0; d < self.dim(); ++d) {
      const int64_t n = self.size(d);
      int64_t i = counter[d] - before[d];
      if (mode == PadMode::kReflect) {
        i = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
      } else {
        i = i < 0 ? 0 : (i >= n ? n - 1 : i);
      }
      src += i * strides[d];
    }
    std::memcpy(o + linear * elem, in + src * elem, elem);
    for (int64_t d = self.dim() - 1; d >= 0; --d) {
      if (++counter[d] < shape.sizes[d]) {
        break;
      }
      counter[d] = 0;
    }
  }
  return out;
}

} // namespace

#define ET_PAD_KERNEL(name, mode, dims)                                 \
  Tensor& name##_out(KernelRuntimeContext& ctx,                         \
                     const Tensor& self,                                \
                     IntArrayRef padding,                               \
                     Tensor& out) {                                     \
    return pad_impl(ctx, #name ".out", self, padding, mode, dims, out); \
  }
ET_PAD_KERNEL(reflection_pad1d, PadMode::kReflect, 1)
ET_PAD_KERNEL(reflection_pad2d, PadMode::kReflect, 2)
ET_PAD_KERNEL(reflection_pad3d, PadMode::kReflect, 3)
ET_PAD_KERNEL(replication_pad1d, PadMode::kReplicate, 1)
ET_PAD_KERNEL(replication_pad2d, PadMode::kReplicate, 2)
ET_PAD_KERNEL(replication_pad3d, PadMode::kReplicate, 3)
#undef ET_PAD_KERNEL

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

} // namespace native
} // namespace executor
} // namespace torch
