#include <executorch/kernels/portable/util/copy.h>

#include <cinttypes>
#include <cstring>

namespace torch {
namespace executor {
namespace native {

View tensor_view(const Tensor& t) {
  View view;
  for (ssize_t d = 0; d < t.dim(); ++d) {
    view.shape.push_back(t.size(d));
  }
  tensor_strides(t, view.strides);
  return view;
}

View reshape_view(const Shape& shape) {
  View view;
  view.shape = shape;
  int64_t stride = 1;
  for (size_t d = shape.ndim; d-- > 0;) {
    view.strides[d] = stride;
    stride *= shape.sizes[d] > 0 ? shape.sizes[d] : 1;
  }
  return view;
}

void drop_dim(View* view, size_t dim) {
  for (size_t d = dim; d + 1 < view->shape.ndim; ++d) {
    view->shape.sizes[d] = view->shape.sizes[d + 1];
    view->strides[d] = view->strides[d + 1];
  }
  --view->shape.ndim;
}

void copy_strided(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& in,
                  const View& view,
                  const Tensor& out,
                  const View& dest) {
  using ::executorch::runtime::isComplexType;
  if (isComplexType(in.scalar_type()) || isComplexType(out.scalar_type())) {
    if (!check_same_dtype(ctx, op, "out", out, in)) {
      return;
    }
    // Complex elements are copied whole, never converted.
    const size_t size = in.element_size();
    const char* src = static_cast<const char*>(in.const_data_ptr()) +
                      view.offset * static_cast<int64_t>(size);
    char* dst = static_cast<char*>(out.mutable_data_ptr()) +
                dest.offset * static_cast<int64_t>(size);
    for_each_index(
        view.shape, view.strides, dest.strides, [&](int64_t from, int64_t to) {
          std::memcpy(dst + to * static_cast<int64_t>(size),
                      src + from * static_cast<int64_t>(size),
                      size);
        });
    return;
  }
  if (!is_supported_dtype(in.scalar_type())) {
    fail_arg(ctx,
             op,
             "unsupported dtype %s",
             ::executorch::runtime::toString(in.scalar_type()));
    return;
  }
  Operand source;
  source.dtype = in.scalar_type();
  source.data = static_cast<const char*>(in.const_data_ptr()) +
                view.offset * static_cast<int64_t>(in.element_size());
  OutOperand target;
  target.dtype = out.scalar_type();
  target.data = static_cast<char*>(out.mutable_data_ptr()) +
                dest.offset * static_cast<int64_t>(out.element_size());
  for (size_t d = 0; d < view.shape.ndim; ++d) {
    source.strides[d] = view.strides[d];
    target.strides[d] = dest.strides[d];
  }
  const Operand inputs[] = {source};
  ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, CTYPE, [&] {
    apply_elementwise<CTYPE>(
        view.shape.ref(), target, inputs, [](CTYPE x) { return x; });
  });
}

void copy_view(KernelRuntimeContext& ctx,
               const char* op,
               const Tensor& in,
               const View& view,
               const Tensor& out) {
  if (resize_out(ctx, op, "out", out, view.shape.ref())) {
    copy_strided(ctx, op, in, view, out, tensor_view(out));
  }
}

bool shape_from_sizes(KernelRuntimeContext& ctx,
                      const char* op,
                      IntArrayRef size,
                      Shape* shape) {
  shape->ndim = 0;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0 || shape->ndim == kMaxDims) {
      fail_arg(ctx, op, "invalid size %" PRId64 " at dim %zu", size[i], i);
      return false;
    }
    shape->push_back(size[i]);
  }
  return true;
}

bool infer_size(KernelRuntimeContext& ctx,
                const char* op,
                IntArrayRef size,
                int64_t numel,
                Shape* shape) {
  if (size.size() > kMaxDims) {
    fail_arg(
        ctx, op, "size has %zu dims, more than %zu", size.size(), kMaxDims);
    return false;
  }
  int64_t known = 1;
  int64_t inferred = -1;
  shape->ndim = 0;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1 && inferred < 0) {
      inferred = static_cast<int64_t>(i);
      shape->push_back(1);
      continue;
    }
    if (size[i] < 0) {
      fail_arg(ctx, op, "invalid size %" PRId64 " at dim %zu", size[i], i);
      return false;
    }
    known *= size[i];
    shape->push_back(size[i]);
  }
  if (inferred >= 0 && known != 0) {
    shape->sizes[inferred] = static_cast<SizesType>(numel / known);
    known *= shape->sizes[inferred];
  }
  if (known != numel) {
    fail_arg(
        ctx, op, "size does not match the %" PRId64 " input elements", numel);
    return false;
  }
  return true;
}

} // namespace native
} // namespace executor
} // namespace torch
