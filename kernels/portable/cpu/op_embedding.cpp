// embedding and index_select: gather rows by index.

#include <cinttypes>
#include <cstring>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Copies row indices[i] of `table` (rows of `row_bytes`) to row i of `dst`
// for each of `count` indices; false if an index is out of range.
template <typename I>
bool gather_rows(KernelRuntimeContext& ctx,
                 const char* op,
                 const char* table,
                 int64_t num_rows,
                 size_t row_bytes,
                 const I* indices,
                 int64_t count,
                 char* dst) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = static_cast<int64_t>(indices[i]);
    index = index < 0 ? index + num_rows : index;
    if (index < 0 || index >= num_rows) {
      fail_arg(ctx,
               op,
               "index %" PRId64 " is out of range for %" PRId64 " rows",
               static_cast<int64_t>(indices[i]),
               num_rows);
      return false;
    }
    std::memcpy(dst + i * row_bytes, table + index * row_bytes, row_bytes);
  }
  return true;
}

} // namespace

Tensor& embedding_out(KernelRuntimeContext& ctx,
                      const Tensor& weight,
                      const Tensor& indices,
                      int64_t padding_idx,
                      bool scale_grad_by_freq,
                      bool sparse,
                      Tensor& out) {
  const char* op = "embedding.out";
  (void)padding_idx; // only affects gradients
  (void)scale_grad_by_freq;
  (void)sparse;
  if (!check_rank(ctx, op, "weight", weight, {2}) ||
      !check_same_dtype(ctx, op, "out", out, weight) ||
      !check_default_dim_order(ctx, op, {&weight, &indices, &out})) {
    return out;
  }
  Shape shape = tensor_view(indices).shape;
  if (shape.ndim + 1 > kMaxDims) {
    fail_arg(ctx, op, "indices have too many dims");
    return out;
  }
  shape.push_back(weight.size(1));
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  const size_t row_bytes = weight.size(1) * weight.element_size();
  ET_SWITCH_INT_TYPES(indices.scalar_type(), ctx, op, I, [&] {
    gather_rows<I>(ctx,
                   op,
                   static_cast<const char*>(weight.const_data_ptr()),
                   weight.size(0),
                   row_bytes,
                   indices.const_data_ptr<I>(),
                   indices.numel(),
                   static_cast<char*>(out.mutable_data_ptr()));
  });
  return out;
}

Tensor& index_select_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         int64_t dim,
                         const Tensor& index,
                         Tensor& out) {
  const char* op = "index_select.out";
  int64_t d = 0;
  if (!normalize_dim(ctx, op, dim, self.dim(), &d) ||
      !check_rank(ctx, op, "index", index, {0, 1}) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self, &out})) {
    return out;
  }
  Shape shape = tensor_view(self).shape;
  if (self.dim() > 0) {
    shape.sizes[d] = static_cast<SizesType>(index.numel());
  }
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  // Viewed as [outer, rows, inner]: gather rows within each outer block.
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t k = 0; k < d; ++k) {
    outer *= self.size(k);
  }
  for (ssize_t k = d + 1; k < self.dim(); ++k) {
    inner *= self.size(k);
  }
  const int64_t rows = self.dim() == 0 ? 1 : self.size(d);
  const size_t row_bytes = inner * self.element_size();
  ET_SWITCH_INT_TYPES(index.scalar_type(), ctx, op, I, [&] {
    for (int64_t o = 0; o < outer; ++o) {
      if (!gather_rows<I>(ctx,
                          op,
                          static_cast<const char*>(self.const_data_ptr()) +
                              o * rows * row_bytes,
                          rows,
                          row_bytes,
                          index.const_data_ptr<I>(),
                          index.numel(),
                          static_cast<char*>(out.mutable_data_ptr()) +
                              o * index.numel() * row_bytes)) {
        return;
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
