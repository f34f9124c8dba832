// Finding positions: nonzero (indices of non-zero elements, dynamically
// sized out), searchsorted and bucketize (binary search in sorted
// boundaries).

#include <cinttypes>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Index of the first boundary b with value < b (right: value <= b is
// skipped too), i.e. the insertion point that keeps boundaries sorted.
// With `order`, boundary k is boundaries[order[k]] (a sorter).
template <typename B, typename V>
int64_t insertion_point(
    const B* boundaries, const int64_t* order, int64_t n, V value, bool right) {
  const double v = internal::convert<double>(value);
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    const double b =
        internal::convert<double>(boundaries[order ? order[mid] : mid]);
    if (right ? b <= v : b < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Checks a searchsorted sorter: int64, sorted_sequence's shape, each entry
// an index into its row of n.
bool check_sorter(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& sorter,
                  const Tensor& sorted_sequence,
                  int64_t n) {
  if (!check_dtype(ctx, op, "sorter", sorter, ScalarType::Long) ||
      !check_default_dim_order(ctx, op, {&sorter})) {
    return false;
  }
  if (sorter.sizes() != sorted_sequence.sizes()) {
    fail_arg(ctx, op, "sorter must have sorted_sequence's shape");
    return false;
  }
  const int64_t* order = sorter.const_data_ptr<int64_t>();
  for (ssize_t i = 0; i < sorter.numel(); ++i) {
    if (order[i] < 0 || order[i] >= n) {
      fail_arg(ctx,
               op,
               "sorter[%zd] = %" PRId64 " is out of range for rows of %" PRId64,
               static_cast<ssize_t>(i),
               order[i],
               n);
      return false;
    }
  }
  return true;
}

} // namespace

// nonzero: [count, rank] int64 coordinates of the non-zero elements, in
// row-major order of self; out must be dynamically shaped.
Tensor& nonzero_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    Tensor& out) {
  const char* op = "nonzero.out";
  if (!check_dtype(ctx, op, "out", out, ScalarType::Long) ||
      !check_default_dim_order(ctx, op, {&self})) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    const T* data = self.const_data_ptr<T>();
    // Counted first so out can be sized before it is written.
    int64_t count = 0;
    for (ssize_t i = 0; i < self.numel(); ++i) {
      count += internal::convert<double>(data[i]) != 0.0 ? 1 : 0;
    }
    Shape shape;
    shape.push_back(count);
    shape.push_back(self.dim());
    if (!resize_out(ctx, op, "out", out, shape.ref())) {
      return;
    }
    // Written through out's strides: exporters may give out the column-major
    // dim order of torch's own nonzero result.
    int64_t* o = out.mutable_data_ptr<int64_t>();
    const auto row_stride = out.strides()[0];
    const auto column_stride = out.strides()[1];
    int64_t counter[kMaxDims] = {};
    for (ssize_t i = 0; i < self.numel(); ++i) {
      if (internal::convert<double>(data[i]) != 0.0) {
        for (ssize_t d = 0; d < self.dim(); ++d) {
          o[d * column_stride] = counter[d];
        }
        o += row_stride;
      }
      for (int64_t d = self.dim() - 1; d >= 0; --d) {
        if (++counter[d] < self.size(d)) {
          break;
        }
        counter[d] = 0;
      }
    }
  });
  return out;
}

Tensor& searchsorted_tensor_out(KernelRuntimeContext& ctx,
                                const Tensor& sorted_sequence,
                                const Tensor& self,
                                bool out_int32,
                                bool right,
                                std::optional<std::string_view> side,
                                const std::optional<Tensor>& sorter,
                                Tensor& out) {
  const char* op = "searchsorted.Tensor_out";
  if (side.has_value()) {
    if (*side != "left" && *side != "right") {
      fail_arg(ctx, op, "side must be 'left' or 'right'");
      return out;
    }
    right = *side == "right";
  }
  // Either one sorted row for all values, or one row per leading index.
  const bool one_row = sorted_sequence.dim() == 1;
  bool rows_match = sorted_sequence.dim() == self.dim();
  for (ssize_t d = 0; rows_match && d + 1 < self.dim(); ++d) {
    rows_match = sorted_sequence.size(d) == self.size(d);
  }
  if ((!one_row && !rows_match) ||
      !check_dtype(ctx,
                   op,
                   "out",
                   out,
                   out_int32 ? ScalarType::Int : ScalarType::Long) ||
      !check_default_dim_order(ctx, op, {&sorted_sequence, &self, &out}) ||
      !resize_like(ctx, op, out, self)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx,
               op,
               "sorted_sequence must be 1-d or match self's "
               "leading dims");
    }
    return out;
  }
  const int64_t n = sorted_sequence.dim() == 0 ? 1 : sorted_sequence.size(-1);
  const int64_t per_row = self.dim() == 0 ? 1 : self.size(-1);
  if (sorter.has_value() &&
      !check_sorter(ctx, op, *sorter, sorted_sequence, n)) {
    return out;
  }
  const int64_t* order =
      sorter.has_value() ? sorter->const_data_ptr<int64_t>() : nullptr;
  ET_SWITCH_REALHBBF16_TYPES(sorted_sequence.scalar_type(), ctx, op, B, [&] {
    ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, V, [&] {
      const B* seq = sorted_sequence.const_data_ptr<B>();
      const V* values = self.const_data_ptr<V>();
      for (ssize_t i = 0; i < self.numel(); ++i) {
        const int64_t row = one_row ? 0 : (i / per_row) * n;
        const int64_t pos = insertion_point(
            seq + row, order ? order + row : nullptr, n, values[i], right);
        if (out_int32) {
          out.mutable_data_ptr<int32_t>()[i] = static_cast<int32_t>(pos);
        } else {
          out.mutable_data_ptr<int64_t>()[i] = pos;
        }
      }
    });
  });
  return out;
}

Tensor& bucketize_tensor_out(KernelRuntimeContext& ctx,
                             const Tensor& self,
                             const Tensor& boundaries,
                             bool out_int32,
                             bool right,
                             Tensor& out) {
  if (boundaries.dim() != 1) {
    fail_arg(ctx, "bucketize.Tensor_out", "boundaries must be 1-d");
    return out;
  }
  return searchsorted_tensor_out(
      ctx, boundaries, self, out_int32, right, std::nullopt, std::nullopt, out);
}

} // namespace native
} // namespace executor
} // namespace torch
