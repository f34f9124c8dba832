// sort and topk along one dim, returning values and int64 indices. NaN
// counts as larger than every number, as in PyTorch; ties keep the lower
// index first. Both work in place in the out tensors (no scratch memory).

#include <cinttypes>
#include <cmath>
#include <tuple>

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/portable/util/reduce.h>

namespace torch {
namespace executor {
namespace native {

namespace {

template <typename C>
bool is_nan(C x) {
  if constexpr (std::is_floating_point<C>::value) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// True when (a, ia) goes before (b, ib) in the requested order.
template <typename C>
bool before(C a, int64_t ia, C b, int64_t ib, bool descending) {
  const bool na = is_nan(a), nb = is_nan(b);
  if (na || nb || a != b) {
    const bool a_less = na ? false : (nb ? true : a < b);
    const bool b_less = nb ? false : (na ? true : b < a);
    return descending ? b_less : a_less;
  }
  return ia < ib;
}

// One lane of (value, index) pairs, addressed with a stride.
template <typename T>
struct Lane {
  T* values;
  int64_t* indices;
  int64_t stride;
  using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;

  C value(int64_t i) const {
    return internal::convert<C>(values[i * stride]);
  }
  bool less(int64_t i, int64_t j, bool descending) const {
    return before(value(i),
                  indices[i * stride],
                  value(j),
                  indices[j * stride],
                  descending);
  }
  void swap(int64_t i, int64_t j) const {
    std::swap(values[i * stride], values[j * stride]);
    std::swap(indices[i * stride], indices[j * stride]);
  }
};

// In-place heapsort of a lane (O(n log n), no extra memory).
template <typename T>
void heap_sort(const Lane<T>& lane, int64_t n, bool descending) {
  auto sift = [&](int64_t root, int64_t end) {
    while (2 * root + 1 < end) {
      int64_t child = 2 * root + 1;
      if (child + 1 < end && lane.less(child, child + 1, descending)) {
        ++child;
      }
      if (!lane.less(root, child, descending)) {
        return;
      }
      lane.swap(root, child);
      root = child;
    }
  };
  for (int64_t start = n / 2 - 1; start >= 0; --start) {
    sift(start, n);
  }
  for (int64_t end = n - 1; end > 0; --end) {
    lane.swap(0, end);
    sift(0, end);
  }
}

// Checks the arguments and resizes values and indices to self's shape with
// k entries along dim (k < 0: all of them).
bool prepare_sort(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& self,
                  int64_t dim,
                  const Tensor& values,
                  const Tensor& indices,
                  int64_t k,
                  int64_t* d) {
  if (!normalize_dim(ctx, op, dim, self.dim(), d) ||
      !check_same_dtype(ctx, op, "values", values, self) ||
      !check_dtype(ctx, op, "indices", indices, ScalarType::Long) ||
      !check_default_dim_order(ctx, op, {&self, &values, &indices})) {
    return false;
  }
  Shape shape = tensor_view(self).shape;
  if (self.dim() > 0) {
    k = k < 0 ? self.size(*d) : k;
    if (k > self.size(*d)) {
      fail_arg(ctx,
               op,
               "k = %" PRId64 " is out of range for size %zd",
               k,
               static_cast<ssize_t>(self.size(*d)));
      return false;
    }
    shape.sizes[*d] = static_cast<SizesType>(k);
  }
  return resize_out(ctx, op, "values", values, shape.ref()) &&
         resize_out(ctx, op, "indices", indices, shape.ref());
}

} // namespace

std::tuple<Tensor&, Tensor&> sort_values(KernelRuntimeContext& ctx,
                                         const Tensor& self,
                                         int64_t dim,
                                         bool descending,
                                         Tensor& values,
                                         Tensor& indices) {
  const char* op = "sort.values";
  std::tuple<Tensor&, Tensor&> result(values, indices);
  int64_t d = 0;
  if (!prepare_sort(ctx, op, self, dim, values, indices, -1, &d)) {
    return result;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    const T* in = self.const_data_ptr<T>();
    T* v = values.mutable_data_ptr<T>();
    int64_t* idx = indices.mutable_data_ptr<int64_t>();
    for_each_lane(self, d, [&](int64_t base, int64_t stride, int64_t len) {
      for (int64_t i = 0; i < len; ++i) {
        v[base + i * stride] = in[base + i * stride];
        idx[base + i * stride] = i;
      }
      heap_sort(Lane<T>{v + base, idx + base, stride}, len, descending);
    });
  });
  return result;
}

// Keeps the best k of each lane sorted in the out lane by insertion:
// O(n * k), fine for the small k models use.
std::tuple<Tensor&, Tensor&> topk_values(KernelRuntimeContext& ctx,
                                         const Tensor& self,
                                         int64_t k,
                                         int64_t dim,
                                         bool largest,
                                         bool sorted,
                                         Tensor& values,
                                         Tensor& indices) {
  const char* op = "topk.values";
  std::tuple<Tensor&, Tensor&> result(values, indices);
  (void)sorted; // results are always sorted
  int64_t d = 0;
  if (k < 0) {
    fail_arg(ctx, op, "k must not be negative");
    return result;
  }
  if (!prepare_sort(ctx, op, self, dim, values, indices, k, &d) || k == 0) {
    return result;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    using C = typename Lane<T>::C;
    const T* in = self.const_data_ptr<T>();
    T* v = values.mutable_data_ptr<T>();
    int64_t* idx = indices.mutable_data_ptr<int64_t>();
    // Lanes of self and of the outputs share outer/inner positions; only
    // the length along d differs.
    for_each_lane(values, d, [&](int64_t base, int64_t stride, int64_t) {
      const int64_t outer = base / (stride * k);
      const int64_t inner = base % stride;
      const int64_t n = self.dim() == 0 ? 1 : self.size(d);
      const T* src = in + outer * n * stride + inner;
      const Lane<T> lane{v + base, idx + base, stride};
      int64_t count = 0;
      for (int64_t i = 0; i < n; ++i) {
        const C x = internal::convert<C>(src[i * stride]);
        if (count == k && !before(x,
                                  i,
                                  lane.value(k - 1),
                                  idx[base + (k - 1) * stride],
                                  largest)) {
          continue;
        }
        int64_t pos = count < k ? count++ : k - 1;
        while (pos > 0 && before(x,
                                 i,
                                 lane.value(pos - 1),
                                 idx[base + (pos - 1) * stride],
                                 largest)) {
          v[base + pos * stride] = v[base + (pos - 1) * stride];
          idx[base + pos * stride] = idx[base + (pos - 1) * stride];
          --pos;
        }
        v[base + pos * stride] = src[i * stride];
        idx[base + pos * stride] = i;
      }
    });
  });
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
