// Joining and splitting along a dim: cat and its inverse
// split_with_sizes_copy, which move whole rows of `inner` contiguous
// elements (so they require the default dim order and matching dtypes; cat
// converts), and stack and its inverse unbind_copy, which copy through
// strided views.

#include <cinttypes>
#include <cstring>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Elements per index of `dim` (product of the sizes after it).
int64_t inner_size(const Tensor& t, int64_t dim) {
  int64_t n = 1;
  for (ssize_t d = dim + 1; d < t.dim(); ++d) {
    n *= t.size(d);
  }
  return n;
}

int64_t outer_size(const Tensor& t, int64_t dim) {
  int64_t n = 1;
  for (int64_t d = 0; d < dim; ++d) {
    n *= t.size(d);
  }
  return n;
}

// PyTorch skips 1-d empty tensors in cat (a legacy rule).
bool skipped_in_cat(const Tensor& t) {
  return t.dim() == 1 && t.numel() == 0;
}

// The View of out that selects `index` along `dim`.
View select_region(const Tensor& out, int64_t dim, int64_t index) {
  View region = tensor_view(out);
  region.offset = index * region.strides[dim];
  drop_dim(&region, static_cast<size_t>(dim));
  return region;
}

} // namespace

Tensor& cat_out(KernelRuntimeContext& ctx,
                ArrayRef<Tensor> tensors,
                int64_t dim,
                Tensor& out) {
  const char* op = "cat.out";
  const Tensor* first = nullptr;
  for (const Tensor& t : tensors) {
    if (!skipped_in_cat(t)) {
      first = &t;
      break;
    }
  }
  if (first == nullptr) {
    // Every input is empty: so is the result.
    if (out.numel() != 0) {
      Shape empty;
      empty.push_back(0);
      resize_out(ctx, op, "out", out, empty.ref());
    }
    return out;
  }
  int64_t d = 0;
  if (!normalize_dim(ctx, op, dim, first->dim(), &d)) {
    return out;
  }
  Shape shape = tensor_view(*first).shape;
  int64_t total = 0;
  size_t index = 0;
  for (const Tensor& t : tensors) {
    if (!skipped_in_cat(t)) {
      bool same = t.dim() == first->dim();
      for (ssize_t k = 0; same && k < t.dim(); ++k) {
        same = k == d || t.size(k) == first->size(k);
      }
      if (!same) {
        fail_arg(ctx,
                 op,
                 "tensor %zu does not match tensor 0 outside dim %" PRId64,
                 index,
                 d);
        return out;
      }
      if (!check_can_cast(ctx, op, t.scalar_type(), out) ||
          !check_default_dim_order(ctx, op, {&t})) {
        return out;
      }
      total += t.size(d);
    }
    ++index;
  }
  shape.sizes[d] = static_cast<SizesType>(total);
  if (!resize_out(ctx, op, "out", out, shape.ref()) ||
      !check_default_dim_order(ctx, op, {&out})) {
    return out;
  }
  // Each input is a [outer, rows * inner] block copied into out's rows.
  const int64_t outer = outer_size(out, d);
  const int64_t inner = inner_size(out, d);
  int64_t row = 0;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t)) {
      continue;
    }
    View view;
    view.shape.push_back(outer);
    view.shape.push_back(t.size(d) * inner);
    view.strides[0] = t.size(d) * inner;
    view.strides[1] = 1;
    Operand source;
    source.data = static_cast<const char*>(t.const_data_ptr());
    source.dtype = t.scalar_type();
    source.strides[0] = view.strides[0];
    source.strides[1] = 1;
    OutOperand dest = out_operand(out);
    dest.data += row * inner * static_cast<int64_t>(out.element_size());
    dest.strides[0] = total * inner;
    dest.strides[1] = 1;
    const Operand inputs[] = {source};
    ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, CTYPE, [&] {
      apply_elementwise<CTYPE>(
          view.shape.ref(), dest, inputs, [](CTYPE x) { return x; });
    });
    row += t.size(d);
  }
  return out;
}

void split_with_sizes_copy_out(KernelRuntimeContext& ctx,
                               const Tensor& self,
                               IntArrayRef split_sizes,
                               int64_t dim,
                               ArrayRef<Tensor> out) {
  const char* op = "split_with_sizes_copy.out";
  int64_t d = 0;
  if (self.dim() == 0) {
    fail_arg(ctx, op, "cannot split a 0-dim tensor");
    return;
  }
  if (!normalize_dim(ctx, op, dim, self.dim(), &d)) {
    return;
  }
  if (split_sizes.size() != out.size()) {
    fail_arg(ctx,
             op,
             "%zu split sizes but %zu out tensors",
             split_sizes.size(),
             out.size());
    return;
  }
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) {
      fail_arg(ctx, op, "negative split size %" PRId64, s);
      return;
    }
    total += s;
  }
  if (total != self.size(d)) {
    fail_arg(ctx,
             op,
             "split sizes add up to %" PRId64 ", dim %" PRId64 " has size %zd",
             total,
             d,
             static_cast<ssize_t>(self.size(d)));
    return;
  }
  int64_t start = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    View view = tensor_view(self);
    view.offset = start * view.strides[d];
    view.shape.sizes[d] = static_cast<SizesType>(split_sizes[i]);
    if (!check_same_dtype(ctx, op, "out", out[i], self)) {
      return;
    }
    copy_view(ctx, op, self, view, out[i]);
    if (ctx.failure_state() != Error::Ok) {
      return;
    }
    start += split_sizes[i];
  }
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

} // namespace native
} // namespace executor
} // namespace torch
