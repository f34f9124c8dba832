// embedding (and its gradient) and index_select: gather rows by index.

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <tuple>

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

// Gradient of embedding: row i of grad_output adds into row indices[i] of
// the [num_weights, D] result, except at padding_idx; scale_grad_by_freq
// divides each contribution by how often its index occurs.
Tensor& embedding_dense_backward_out(KernelRuntimeContext& ctx,
                                     const Tensor& grad_output,
                                     const Tensor& indices,
                                     int64_t num_weights,
                                     int64_t padding_idx,
                                     bool scale_grad_by_freq,
                                     Tensor& out) {
  const char* op = "embedding_dense_backward.out";
  const int64_t count = indices.numel();
  const int64_t width =
      grad_output.dim() > 0 ? grad_output.size(grad_output.dim() - 1) : 0;
  if (grad_output.dim() != indices.dim() + 1 ||
      grad_output.numel() != count * width || num_weights < 0) {
    fail_arg(ctx,
             op,
             "grad_output must have the indices' shape plus one dim, and "
             "num_weights must be >= 0");
    return out;
  }
  const SizesType shape[] = {static_cast<SizesType>(num_weights),
                             static_cast<SizesType>(width)};
  if (!check_same_dtype(ctx, op, "out", out, grad_output) ||
      !check_default_dim_order(ctx, op, {&grad_output, &indices, &out}) ||
      !resize_out(ctx, op, "out", out, ArrayRef<SizesType>(shape, 2))) {
    return out;
  }
  int64_t* frequency = nullptr;
  if (scale_grad_by_freq) {
    auto temp = ctx.allocate_temp(
        static_cast<size_t>(num_weights + 1) * sizeof(int64_t),
        alignof(int64_t));
    if (!temp.ok()) {
      fail_arg(ctx,
               op,
               "scale_grad_by_freq needs temp memory for %" PRId64 " counts",
               num_weights);
      return out;
    }
    frequency = static_cast<int64_t*>(*temp);
    std::fill(frequency, frequency + num_weights, int64_t(0));
  }
  ET_SWITCH_INT_TYPES(indices.scalar_type(), ctx, op, I, [&] {
    const I* idx = indices.const_data_ptr<I>();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = static_cast<int64_t>(idx[i]);
      if (row < 0 || row >= num_weights) {
        fail_arg(ctx,
                 op,
                 "index %" PRId64 " at %" PRId64 " is out of range for %" PRId64
                 " rows",
                 row,
                 i,
                 num_weights);
        return;
      }
      if (frequency != nullptr) {
        ++frequency[row];
      }
    }
    ET_SWITCH_REALHBBF16_TYPES(out.scalar_type(), ctx, op, T, [&] {
      const T* grad = grad_output.const_data_ptr<T>();
      T* o = out.mutable_data_ptr<T>();
      std::fill(o, o + out.numel(), T(0));
      for (int64_t i = 0; i < count; ++i) {
        const int64_t row = static_cast<int64_t>(idx[i]);
        if (row == padding_idx) {
          continue;
        }
        const double divisor =
            frequency != nullptr ? static_cast<double>(frequency[row]) : 1.0;
        for (int64_t j = 0; j < width; ++j) {
          T& target = o[row * width + j];
          target = internal::convert<T>(
              internal::convert<double>(target) +
              internal::convert<double>(grad[i * width + j]) / divisor);
        }
      }
    });
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

// _embedding_bag: bag b reduces the weight rows indices[offsets[b] ..
// offsets[b + 1]) by sum (0), mean (1) or max (2), skipping padding_idx.
// The auxiliary outputs follow eager's shapes: offset2bag (bag of each
// index; may be empty for sum), bag_size (rows per bag; zeros for sum) and
// max_indices ([bags, dim] argmax rows for max; otherwise bag_size again
// for mean and zeros for sum).
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> _embedding_bag_out(
    KernelRuntimeContext& ctx,
    const Tensor& weight,
    const Tensor& indices,
    const Tensor& offsets,
    bool scale_grad_by_freq,
    int64_t mode,
    bool sparse,
    const std::optional<Tensor>& per_sample_weights,
    bool include_last_offset,
    int64_t padding_idx,
    Tensor& out,
    Tensor& offset2bag,
    Tensor& bag_size,
    Tensor& max_indices) {
  const char* op = "_embedding_bag.out";
  std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> result(
      out, offset2bag, bag_size, max_indices);
  (void)scale_grad_by_freq; // only affects gradients
  (void)sparse;
  if (weight.dim() != 2 || indices.dim() != 1 || offsets.dim() != 1 ||
      mode < 0 || mode > 2 || (per_sample_weights.has_value() && mode != 0) ||
      !check_dtype(ctx, op, "indices", indices, ScalarType::Long) ||
      !check_dtype(ctx, op, "offsets", offsets, ScalarType::Long) ||
      !check_same_dtype(ctx, op, "out", out, weight) ||
      !check_default_dim_order(ctx, op, {&weight, &out})) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx,
               op,
               "needs 2-d weight, 1-d int64 indices and offsets, "
               "mode 0-2, and per_sample_weights only with mode sum");
    }
    return result;
  }
  const int64_t n = indices.numel();
  const int64_t rows = weight.size(0), dim = weight.size(1);
  const int64_t bags =
      include_last_offset ? offsets.numel() - 1 : offsets.numel();
  const int64_t* idx = indices.const_data_ptr<int64_t>();
  const int64_t* off = offsets.const_data_ptr<int64_t>();
  Shape out_shape, bag_shape, o2b_shape, max_shape;
  out_shape.push_back(bags < 0 ? 0 : bags);
  out_shape.push_back(dim);
  bag_shape.push_back(bags < 0 ? 0 : bags);
  // Eager leaves offset2bag empty in sum mode on its fast path but not on
  // others (and shape inference disagrees by dtype), so in sum mode the
  // size the program planned decides: n (filled) or 0.
  const bool fill_o2b = mode != 0 || offset2bag.numel() == n;
  o2b_shape.push_back(fill_o2b ? n : 0);
  max_shape = mode == 2 ? out_shape : bag_shape;
  if (bags < 0 || !resize_out(ctx, op, "out", out, out_shape.ref()) ||
      !resize_out(ctx, op, "offset2bag", offset2bag, o2b_shape.ref()) ||
      !resize_out(ctx, op, "bag_size", bag_size, bag_shape.ref()) ||
      !resize_out(ctx, op, "max_indices", max_indices, max_shape.ref())) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "include_last_offset needs at least one offset");
    }
    return result;
  }
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t end = b + 1 < offsets.numel() ? off[b + 1] : n;
    if (off[b] < 0 || off[b] > end || end > n) {
      fail_arg(ctx, op, "offsets must be non-decreasing and within indices");
      return result;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (idx[i] < 0 || idx[i] >= rows) {
      fail_arg(ctx,
               op,
               "index %" PRId64 " is out of range for %" PRId64 " rows",
               idx[i],
               rows);
      return result;
    }
  }
  int64_t* o2b = offset2bag.mutable_data_ptr<int64_t>();
  int64_t* sizes = bag_size.mutable_data_ptr<int64_t>();
  int64_t* argmax = max_indices.mutable_data_ptr<int64_t>();
  ET_SWITCH_FLOATHBF16_TYPES(weight.scalar_type(), ctx, op, T, [&] {
    const T* w = weight.const_data_ptr<T>();
    const T* psw = per_sample_weights.has_value()
                       ? per_sample_weights->const_data_ptr<T>()
                       : nullptr;
    T* o = out.mutable_data_ptr<T>();
    for (int64_t b = 0; b < bags; ++b) {
      const int64_t end = b + 1 < offsets.numel() ? off[b + 1] : n;
      int64_t count = 0;
      for (int64_t d = 0; d < dim; ++d) {
        double acc = 0;
        int64_t best_row = -1;
        count = 0;
        for (int64_t i = off[b]; i < end; ++i) {
          if (idx[i] == padding_idx) {
            continue;
          }
          const double v = internal::convert<double>(w[idx[i] * dim + d]);
          if (mode == 2) {
            if (best_row < 0 || v > acc) {
              acc = v;
              best_row = idx[i];
            }
          } else {
            acc += psw != nullptr ? v * internal::convert<double>(psw[i]) : v;
          }
          ++count;
        }
        if (mode == 1 && count > 0) {
          acc /= static_cast<double>(count);
        }
        o[b * dim + d] = internal::convert<T>(acc);
        if (mode == 2) {
          argmax[b * dim + d] = best_row < 0 ? -1 : best_row;
        }
      }
      sizes[b] = mode == 0 ? 0 : count;
      if (mode == 1) {
        argmax[b] = count;
      } else if (mode == 0) {
        argmax[b] = 0;
      }
      for (int64_t i = off[b]; fill_o2b && i < end; ++i) {
        o2b[i] = b;
      }
    }
  });
  return result;
}

// What eval-mode export emits: the same computation.
std::tuple<Tensor&, Tensor&, Tensor&, Tensor&> _embedding_bag_forward_only_out(
    KernelRuntimeContext& ctx,
    const Tensor& weight,
    const Tensor& indices,
    const Tensor& offsets,
    bool scale_grad_by_freq,
    int64_t mode,
    bool sparse,
    const std::optional<Tensor>& per_sample_weights,
    bool include_last_offset,
    int64_t padding_idx,
    Tensor& out,
    Tensor& offset2bag,
    Tensor& bag_size,
    Tensor& max_indices) {
  return _embedding_bag_out(ctx,
                            weight,
                            indices,
                            offsets,
                            scale_grad_by_freq,
                            mode,
                            sparse,
                            per_sample_weights,
                            include_last_offset,
                            padding_idx,
                            out,
                            offset2bag,
                            bag_size,
                            max_indices);
}

} // namespace native
} // namespace executor
} // namespace torch
