#pragma once

// Copies through strided views. The view-producing operators (permute,
// select, slice, expand, ...) exist as copies in the Edge dialect; each one
// describes how its output reads the input as a View and calls
// copy_view(), which resizes out and copies (converting dtype if out's
// differs).

#include <executorch/kernels/portable/util/elementwise.h>

namespace torch {
namespace executor {
namespace native {

struct View {
  Shape shape;
  int64_t strides[kMaxDims] = {};
  int64_t offset = 0; // in elements
};

// `t` as it is laid out.
View tensor_view(const Tensor& t);

// `t`'s elements in row-major logical order, reshaped to `shape`. Only
// valid for tensors with the default dim order (checked by copy_view's
// callers through check_default_dim_order).
View reshape_view(const Shape& shape);

// Removes dim `dim` from `view` (select at index 0 without an offset).
void drop_dim(View* view, size_t dim);

// Resizes `out` to view.shape and copies `in` read through `view`.
void copy_view(KernelRuntimeContext& ctx,
               const char* op,
               const Tensor& in,
               const View& view,
               const Tensor& out);

// Visits every index of `shape` in row-major order, calling
// fn(offset_a, offset_b) with that index's element offsets in two layouts
// given by their strides.
template <typename Fn>
void for_each_index(const Shape& shape,
                    const int64_t* strides_a,
                    const int64_t* strides_b,
                    Fn fn) {
  const int64_t count = shape.numel();
  int64_t index[kMaxDims] = {};
  int64_t a = 0;
  int64_t b = 0;
  for (int64_t n = 0; n < count; ++n) {
    fn(a, b);
    // Advance the last dim, carrying into the ones before it.
    for (size_t d = shape.ndim; d-- > 0;) {
      a += strides_a[d];
      b += strides_b[d];
      if (++index[d] < shape.sizes[d]) {
        break;
      }
      a -= strides_a[d] * index[d];
      b -= strides_b[d] * index[d];
      index[d] = 0;
    }
  }
}

// Copies `in`, read through `view`, into `out` written through `dest`
// (same index space: dest.shape must equal view.shape; dest.offset and
// strides address out). out is not resized. Repeat and pixel_shuffle use
// index spaces of higher rank than out; scatters write a region of out.
void copy_strided(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& in,
                  const View& view,
                  const Tensor& out,
                  const View& dest);

// Copies an explicit size list (no -1) into `shape`; false (context
// failed) for negative sizes or too many dims.
bool shape_from_sizes(KernelRuntimeContext& ctx,
                      const char* op,
                      IntArrayRef size,
                      Shape* shape);

// Resolves a size list that may hold one -1 against `numel` elements into
// `shape`; false (context failed) if it cannot hold exactly `numel`.
bool infer_size(KernelRuntimeContext& ctx,
                const char* op,
                IntArrayRef size,
                int64_t numel,
                Shape* shape);

} // namespace native
} // namespace executor
} // namespace torch
