#include <executorch/kernels/portable/util/reduce.h>

#include <cinttypes>

namespace torch {
namespace executor {
namespace native {

bool prepare_reduction(KernelRuntimeContext& ctx,
                       const char* op,
                       const Tensor& in,
                       std::optional<IntArrayRef> dims,
                       bool keepdim,
                       const Tensor& out,
                       ReducePlan* plan) {
  const int64_t rank = in.dim();
  bool reduced[kMaxDims] = {};
  const bool all = !dims.has_value() || dims->size() == 0;
  if (!all) {
    for (int64_t dim : *dims) {
      int64_t d = 0;
      if (!normalize_dim(ctx, op, dim, rank, &d)) {
        return false;
      }
      if (rank > 0 && reduced[d]) {
        fail_arg(ctx, op, "dim %" PRId64 " appears twice in dims", d);
        return false;
      }
      reduced[d] = true;
    }
  }
  if (!check_default_dim_order(ctx, op, {&out})) {
    return false;
  }
  int64_t strides[kMaxDims];
  tensor_strides(in, strides);
  plan->out_shape.ndim = 0;
  plan->kept_ndim = 0;
  plan->reduced_ndim = 0;
  plan->reduced_count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const bool r = all || reduced[d];
    if (r) {
      plan->reduced_sizes[plan->reduced_ndim] = in.size(d);
      plan->reduced_strides[plan->reduced_ndim++] = strides[d];
      plan->reduced_count *= in.size(d);
      if (keepdim) {
        plan->out_shape.push_back(1);
      }
    } else {
      plan->kept_sizes[plan->kept_ndim] = in.size(d);
      plan->kept_strides[plan->kept_ndim++] = strides[d];
      plan->out_shape.push_back(in.size(d));
    }
  }
  int64_t* reduced_strides = plan->reduced_strides;
  plan->reduced_ndim = internal::coalesce(
      plan->reduced_sizes, plan->reduced_ndim, &reduced_strides, 1);
  return resize_out(ctx, op, "out", out, plan->out_shape.ref());
}

} // namespace native
} // namespace executor
} // namespace torch
