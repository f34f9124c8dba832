#pragma once

// Reductions over a set of dims (sum, mean, amax, ...) and per-lane
// operations along one dim (softmax, layer norm). The reduced dims are
// coalesced where the input is contiguous across them, so the common cases
// (last dims, all dims) become one strided loop per output element.

#include <optional>

#include <executorch/kernels/portable/util/elementwise.h>

namespace torch {
namespace executor {
namespace native {

struct ReducePlan {
  Shape out_shape; // keepdim applied
  // Dims that survive, outermost first, and the reduced dims (coalesced).
  int64_t kept_sizes[kMaxDims];
  int64_t kept_strides[kMaxDims];
  size_t kept_ndim = 0;
  int64_t reduced_sizes[kMaxDims];
  int64_t reduced_strides[kMaxDims];
  size_t reduced_ndim = 0;
  int64_t reduced_count = 1;
};

// Builds the plan for reducing `in` over `dims` (None or empty: all dims)
// and resizes `out` to the result shape; false (context failed) on bad
// dims or an out that cannot take the shape.
bool prepare_reduction(KernelRuntimeContext& ctx,
                       const char* op,
                       const Tensor& in,
                       std::optional<IntArrayRef> dims,
                       bool keepdim,
                       const Tensor& out,
                       ReducePlan* plan);

// For each output element, in row-major order: folds the reduced input
// elements (as T) into an ACC starting from `init` with `step`, then stores
// `finish(acc)` into out (converted to out's dtype).
template <typename T, typename ACC, typename Step, typename Finish>
void reduce_into(const Tensor& in,
                 const ReducePlan& plan,
                 const Tensor& out,
                 ACC init,
                 Step step,
                 Finish finish) {
  using R = decltype(finish(init));
  const T* data = in.const_data_ptr<T>();
  char* out_data = static_cast<char*>(out.mutable_data_ptr());
  const int64_t out_size = static_cast<int64_t>(out.element_size());
  const size_t rn = plan.reduced_ndim;
  const int64_t inner = rn == 0 ? 1 : plan.reduced_sizes[rn - 1];
  const int64_t inner_stride = rn == 0 ? 0 : plan.reduced_strides[rn - 1];
  int64_t kept_counter[kMaxDims] = {};
  int64_t base = 0;
  const int64_t out_numel = plan.out_shape.numel();
  for (int64_t o = 0; o < out_numel; ++o) {
    ACC acc = init;
    if (plan.reduced_count > 0) {
      int64_t counter[kMaxDims] = {};
      int64_t offset = base;
      while (true) {
        const T* p = data + offset;
        for (int64_t i = 0; i < inner; ++i) {
          acc = step(acc, p[i * inner_stride]);
        }
        int64_t d = static_cast<int64_t>(rn) - 2;
        for (; d >= 0; --d) {
          offset += plan.reduced_strides[d];
          if (++counter[d] < plan.reduced_sizes[d]) {
            break;
          }
          offset -= plan.reduced_strides[d] * plan.reduced_sizes[d];
          counter[d] = 0;
        }
        if (d < 0) {
          break;
        }
      }
    }
    const R result = finish(acc);
    internal::store_block<R>(
        &result, out_data + o * out_size, out.scalar_type(), 1, 1);
    for (int64_t d = static_cast<int64_t>(plan.kept_ndim) - 1; d >= 0; --d) {
      base += plan.kept_strides[d];
      if (++kept_counter[d] < plan.kept_sizes[d]) {
        break;
      }
      base -= plan.kept_strides[d] * plan.kept_sizes[d];
      kept_counter[d] = 0;
    }
  }
}

// Calls fn(base, stride, length) for every 1-d lane along `dim` of a
// contiguous tensor of shape `sizes`, in elements.
template <typename Fn>
void for_each_lane(ArrayRef<SizesType> sizes, int64_t dim, Fn fn) {
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < dim; ++d) {
    outer *= sizes[d];
  }
  for (size_t d = dim + 1; d < sizes.size(); ++d) {
    inner *= sizes[d];
  }
  const int64_t length = sizes.empty() ? 1 : sizes[dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      fn(o * length * inner + i, inner, length);
    }
  }
}

// for_each_lane over `t`, which must have the default dim order.
template <typename Fn>
void for_each_lane(const Tensor& t, int64_t dim, Fn fn) {
  for_each_lane(t.sizes(), dim, fn);
}

} // namespace native
} // namespace executor
} // namespace torch
