// gather, scatter (src and value), scatter_add, select_scatter and
// slice_scatter: element moves along one dim driven by an index tensor or a
// slice. Tensors use the default dim order.

#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Walks every element of `index` in row-major order, calling
// fn(index_linear, target_offset_without_dim) where the second value is the
// offset in a tensor with `strides` of the same coordinates, leaving out
// dim `dim` (the caller adds the index's contribution).
template <typename Fn>
void walk_index(const Tensor& index,
                int64_t dim,
                const int64_t* strides,
                Fn fn) {
  const int64_t rank = index.dim();
  int64_t counter[kMaxDims] = {};
  int64_t offset = 0;
  for (int64_t i = 0; i < index.numel(); ++i) {
    fn(i, offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t step = d == dim ? 0 : strides[d];
      offset += step;
      if (++counter[d] < index.size(d)) {
        break;
      }
      offset -= step * index.size(d);
      counter[d] = 0;
    }
  }
}

// Index values stored as int64 or int32 (PyTorch accepts both here).
struct IndexValues {
  const void* data;
  bool is_long;

  int64_t operator[](int64_t i) const {
    return is_long ? static_cast<const int64_t*>(data)[i]
                   : static_cast<const int32_t*>(data)[i];
  }
};

IndexValues index_values(const Tensor& index) {
  return {index.const_data_ptr(), index.scalar_type() == ScalarType::Long};
}

// Common checks: same rank for self and index, index int64 or int32 (any
// dtype when empty, as eager never reads it), dim valid.
bool prepare_index_op(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& self,
                      int64_t dim,
                      const Tensor& index,
                      int64_t* d) {
  const ScalarType index_type = index.scalar_type();
  if (index.numel() > 0 && index_type != ScalarType::Long &&
      index_type != ScalarType::Int) {
    fail_arg(ctx,
             op,
             "'index' has dtype %s, expected Long or Int",
             ::executorch::runtime::toString(index_type));
    return false;
  }
  if (!normalize_dim(ctx, op, dim, self.dim(), d) ||
      !check_default_dim_order(ctx, op, {&self, &index})) {
    return false;
  }
  if (index.dim() != self.dim() && !(index.dim() <= 1 && self.dim() <= 1)) {
    fail_arg(ctx, op, "index must have the same rank as self");
    return false;
  }
  return true;
}

// Reads index[i], wraps negatives, and checks it against `size`.
bool read_index(KernelRuntimeContext& ctx,
                const char* op,
                IndexValues index,
                int64_t i,
                int64_t size,
                int64_t* value) {
  int64_t v = index[i];
  v = v < 0 ? v + size : v;
  if (v < 0 || v >= size) {
    fail_arg(ctx,
             op,
             "index %" PRId64 " is out of range for size %" PRId64,
             index[i],
             size);
    return false;
  }
  *value = v;
  return true;
}

// For each index position, calls visit(target, value) with target the
// element of out at the index (along d) and the position's other
// coordinates, and value the src element at the position (or `fill`).
// False after an out-of-range index (the context has failed).
template <typename T, typename Visit>
bool scatter_walk(KernelRuntimeContext& ctx,
                  const char* op,
                  int64_t d,
                  const Tensor& index,
                  const Tensor* src,
                  T fill,
                  const Tensor& out,
                  Visit visit) {
  int64_t out_strides[kMaxDims];
  int64_t src_strides[kMaxDims];
  tensor_strides(out, out_strides);
  if (src != nullptr) {
    tensor_strides(*src, src_strides);
  }
  const int64_t dim_size = out.dim() == 0 ? 1 : out.size(d);
  const int64_t dim_stride = out.dim() == 0 ? 0 : out_strides[d];
  const IndexValues idx = index_values(index);
  T* o = out.mutable_data_ptr<T>();
  // Source elements are read at the index's coordinates.
  int64_t src_counter[kMaxDims] = {};
  int64_t src_offset = 0;
  bool ok = true;
  walk_index(index, d, out_strides, [&](int64_t i, int64_t base) {
    int64_t v = 0;
    if (!ok || !read_index(ctx, op, idx, i, dim_size, &v)) {
      ok = false;
      return;
    }
    visit(o[base + v * dim_stride],
          src != nullptr ? src->const_data_ptr<T>()[src_offset] : fill);
    if (src != nullptr) {
      for (int64_t k = index.dim() - 1; k >= 0; --k) {
        src_offset += src_strides[k];
        if (++src_counter[k] < index.size(k)) {
          break;
        }
        src_offset -= src_strides[k] * index.size(k);
        src_counter[k] = 0;
      }
    }
  });
  return ok;
}

// Checks a scatter's arguments and copies self to out; false (context
// failed) on bad arguments. `d` gets the normalized dim.
bool prepare_scatter(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     int64_t dim,
                     const Tensor& index,
                     const Tensor* src,
                     const Tensor& out,
                     int64_t* d) {
  if (!prepare_index_op(ctx, op, self, dim, index, d) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      (src != nullptr && (!check_same_dtype(ctx, op, "src", *src, self) ||
                          !check_default_dim_order(ctx, op, {src})))) {
    return false;
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  return ctx.failure_state() == Error::Ok;
}

// out = self, then out[.., index, ..] = combine(out, src or value) at
// every index position.
template <typename Combine>
Tensor& scatter_impl(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     int64_t dim,
                     const Tensor& index,
                     const Tensor* src,
                     const Scalar* value,
                     Tensor& out,
                     Combine combine) {
  int64_t d = 0;
  if (!prepare_scatter(ctx, op, self, dim, index, src, out, &d)) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    const T fill = value != nullptr ? value->to<T>() : T();
    scatter_walk<T>(ctx, op, d, index, src, fill, out, [&](T& target, T v) {
      target = combine(target, v);
    });
  });
  return out;
}

// Copies `src` into the part of `out` that `region` describes.
void write_region(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& src,
                  const View& region,
                  const Tensor& out) {
  if (region.shape.ref() != src.sizes()) {
    fail_arg(ctx, op, "src does not have the shape of the region it replaces");
    return;
  }
  copy_strided(ctx, op, src, tensor_view(src), out, region);
}

template <typename T>
T replace(T, T value) {
  return value;
}

// a * b; for bool, a && b.
template <typename C>
C product(C a, C b) {
  if constexpr (std::is_same<C, bool>::value) {
    return a && b;
  } else {
    return static_cast<C>(a * b);
  }
}

template <typename T>
T accumulate(T current, T value) {
  return internal::convert<T>(internal::convert<double>(current) +
                              internal::convert<double>(value));
}

} // namespace

Tensor& gather_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   int64_t dim,
                   const Tensor& index,
                   bool sparse_grad,
                   Tensor& out) {
  const char* op = "gather.out";
  (void)sparse_grad;
  int64_t d = 0;
  if (!prepare_index_op(ctx, op, self, dim, index, &d) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !resize_out(ctx, op, "out", out, index.sizes())) {
    return out;
  }
  int64_t self_strides[kMaxDims];
  tensor_strides(self, self_strides);
  const int64_t dim_size = self.dim() == 0 ? 1 : self.size(d);
  const int64_t dim_stride = self.dim() == 0 ? 0 : self_strides[d];
  const IndexValues idx = index_values(index);
  const size_t elem = self.element_size();
  const char* in = static_cast<const char*>(self.const_data_ptr());
  char* o = static_cast<char*>(out.mutable_data_ptr());
  bool ok = true;
  walk_index(index, d, self_strides, [&](int64_t i, int64_t base) {
    int64_t v = 0;
    if (ok && read_index(ctx, op, idx, i, dim_size, &v)) {
      std::memcpy(o + i * elem, in + (base + v * dim_stride) * elem, elem);
    } else {
      ok = false;
    }
  });
  return out;
}

Tensor& scatter_src_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        int64_t dim,
                        const Tensor& index,
                        const Tensor& src,
                        Tensor& out) {
  return scatter_impl(
      ctx,
      "scatter.src_out",
      self,
      dim,
      index,
      &src,
      nullptr,
      out,
      [](auto current, auto value) { return replace(current, value); });
}

Tensor& scatter_value_out(KernelRuntimeContext& ctx,
                          const Tensor& self,
                          int64_t dim,
                          const Tensor& index,
                          const Scalar& value,
                          Tensor& out) {
  return scatter_impl(ctx,
                      "scatter.value_out",
                      self,
                      dim,
                      index,
                      nullptr,
                      &value,
                      out,
                      [](auto current, auto v) { return replace(current, v); });
}

Tensor& scatter_add_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        int64_t dim,
                        const Tensor& index,
                        const Tensor& src,
                        Tensor& out) {
  return scatter_impl(
      ctx,
      "scatter_add.out",
      self,
      dim,
      index,
      &src,
      nullptr,
      out,
      [](auto current, auto value) { return accumulate(current, value); });
}

// select_scatter / slice_scatter: out = self with a selected or sliced
// region replaced by src.
Tensor& select_scatter_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           const Tensor& src,
                           int64_t dim,
                           int64_t index,
                           Tensor& out) {
  const char* op = "select_scatter.out";
  int64_t d = 0;
  if (self.dim() == 0 || !normalize_dim(ctx, op, dim, self.dim(), &d)) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "self must have at least one dim");
    }
    return out;
  }
  const int64_t size = self.size(d);
  if (index < -size || index >= size) {
    fail_arg(ctx, op, "index %" PRId64 " is out of range", index);
    return out;
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  if (ctx.failure_state() != Error::Ok) {
    return out;
  }
  // Write src through a view of out that selects the index.
  View region = tensor_view(out);
  region.offset = (index < 0 ? index + size : index) * region.strides[d];
  drop_dim(&region, static_cast<size_t>(d));
  write_region(ctx, op, src, region, out);
  return out;
}

Tensor& slice_scatter_out(KernelRuntimeContext& ctx,
                          const Tensor& self,
                          const Tensor& src,
                          int64_t dim,
                          std::optional<int64_t> start,
                          std::optional<int64_t> end,
                          int64_t step,
                          Tensor& out) {
  const char* op = "slice_scatter.out";
  int64_t d = 0;
  if (self.dim() == 0 || !normalize_dim(ctx, op, dim, self.dim(), &d) ||
      step <= 0) {
    if (ctx.failure_state() == Error::Ok) {
      fail_arg(ctx, op, "self must have a dim and step must be positive");
    }
    return out;
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  if (ctx.failure_state() != Error::Ok) {
    return out;
  }
  const int64_t size = self.size(d);
  auto clamp_bound = [size](int64_t v) {
    v = v < 0 ? v + size : v;
    return v < 0 ? 0 : (v > size ? size : v);
  };
  const int64_t first = clamp_bound(start.value_or(0));
  const int64_t last = clamp_bound(end.value_or(size));
  const int64_t count = last > first ? (last - first + step - 1) / step : 0;
  View region = tensor_view(out);
  region.offset = first * region.strides[d];
  region.shape.sizes[d] = static_cast<SizesType>(count);
  region.strides[d] *= step;
  write_region(ctx, op, src, region, out);
  return out;
}

// scatter_reduce with "sum", "prod", "mean", "amax" or "amin"; without
// include_self, targets start from the reduction's identity instead of
// self. "mean" counts the values each target receives in temp memory.
Tensor& scatter_reduce_two_out(KernelRuntimeContext& ctx,
                               const Tensor& self,
                               int64_t dim,
                               const Tensor& index,
                               const Tensor& src,
                               std::string_view reduce,
                               bool include_self,
                               Tensor& out) {
  const char* op = "scatter_reduce.two_out";
  enum { kSum, kProd, kMean, kMax, kMin } kind;
  if (reduce == "sum") {
    kind = kSum;
  } else if (reduce == "prod") {
    kind = kProd;
  } else if (reduce == "mean") {
    kind = kMean;
  } else if (reduce == "amax") {
    kind = kMax;
  } else if (reduce == "amin") {
    kind = kMin;
  } else {
    fail_arg(ctx, op, "reduce must be sum, prod, mean, amax or amin");
    return out;
  }
  int64_t d = 0;
  if (!prepare_scatter(ctx, op, self, dim, index, &src, out, &d)) {
    return out;
  }
  int64_t* counts = nullptr;
  if (kind == kMean) {
    auto temp =
        ctx.allocate_temp(out.numel() * sizeof(int64_t) + 1, alignof(int64_t));
    if (!temp.ok()) {
      fail_arg(ctx,
               op,
               "reduce='mean' needs temp memory for %zd counts",
               static_cast<ssize_t>(out.numel()));
      return out;
    }
    counts = static_cast<int64_t*>(*temp);
    std::memset(counts, 0, out.numel() * sizeof(int64_t));
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    T* base = out.mutable_data_ptr<T>();
    if (!include_self) {
      const C identity = kind == kProd  ? C(1)
                         : kind == kMax ? std::numeric_limits<C>::lowest()
                         : kind == kMin ? std::numeric_limits<C>::max()
                                        : C(0);
      const T init = internal::convert<T>(identity);
      if (!scatter_walk<T>(
              ctx, op, d, index, &src, T(), out, [init](T& target, T) {
                target = init;
              })) {
        return;
      }
    }
    const bool ok =
        scatter_walk<T>(ctx, op, d, index, &src, T(), out, [&](T& target, T v) {
          const C a = internal::convert<C>(target);
          const C b = internal::convert<C>(v);
          const C r = (kind == kSum || kind == kMean) ? C(a + b)
                      : kind == kProd                 ? product(a, b)
                      : kind == kMax                  ? (b > a ? b : a)
                                                      : (b < a ? b : a);
          target = internal::convert<T>(r);
          if (counts != nullptr) {
            ++counts[&target - base];
          }
        });
    if (!ok || counts == nullptr) {
      return;
    }
    // Integer means round toward negative infinity, as in PyTorch.
    for (ssize_t i = 0; i < out.numel(); ++i) {
      const int64_t n = counts[i] + (include_self ? 1 : 0);
      if (counts[i] > 0) {
        const double m = internal::convert<double>(base[i]) / n;
        base[i] = internal::convert<T>(
            std::is_integral<T>::value ? std::floor(m) : m);
      }
    }
  });
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
