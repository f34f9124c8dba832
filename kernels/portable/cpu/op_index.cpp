// Advanced indexing: index.Tensor (gather by integer index tensors) and
// index_put (scatter into a copy of self). Index tensors broadcast
// together; None entries keep a whole dim. When the indexed dims are
// adjacent the broadcast index dims replace them in place, otherwise they
// go first, as in PyTorch. Bool masks are not supported yet.

#include <cinttypes>
#include <cstring>

#include <executorch/kernels/portable/util/copy.h>

namespace torch {
namespace executor {
namespace native {

namespace {

using OptTensorList = ArrayRef<std::optional<Tensor>>;

// How each dim of the indexing result addresses self: a self dim walked
// directly, or one of the broadcast index dims.
struct IndexPlan {
  Shape shape;                 // the result's shape
  int64_t self_dim[kMaxDims];  // self dim, or -1 for an index dim
  int64_t index_dim[kMaxDims]; // position within the index shape
  Shape index_shape;           // broadcast shape of the index tensors
  int64_t self_strides[kMaxDims];
  // Per index tensor: the self dim it indexes and its broadcast strides.
  const Tensor* tensors[kMaxDims];
  int64_t indexed_dim[kMaxDims];
  int64_t tensor_strides_[kMaxDims][kMaxDims];
  size_t num_tensors = 0;
};

bool make_index_plan(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     OptTensorList indices,
                     IndexPlan* plan) {
  if (static_cast<int64_t>(indices.size()) > self.dim()) {
    fail_arg(ctx,
             op,
             "%zu indices for a rank-%zd tensor",
             indices.size(),
             static_cast<ssize_t>(self.dim()));
    return false;
  }
  int64_t first = -1;
  int64_t last = -1;
  bool adjacent = true;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i].has_value()) {
      continue;
    }
    const Tensor& t = *indices[i];
    if (t.scalar_type() != ScalarType::Long &&
        t.scalar_type() != ScalarType::Int) {
      fail_arg(ctx,
               op,
               "index %zu has dtype %s; only int64/int32 indices "
               "are supported",
               i,
               ::executorch::runtime::toString(t.scalar_type()));
      return false;
    }
    if (!check_default_dim_order(ctx, op, {&t})) {
      return false;
    }
    if (last >= 0 && static_cast<int64_t>(i) != last + 1) {
      adjacent = false;
    }
    first = first < 0 ? static_cast<int64_t>(i) : first;
    last = static_cast<int64_t>(i);
    plan->tensors[plan->num_tensors] = &t;
    plan->indexed_dim[plan->num_tensors++] = static_cast<int64_t>(i);
  }
  if (plan->num_tensors == 0) {
    fail_arg(ctx, op, "needs at least one index tensor");
    return false;
  }
  // Broadcast the index tensors.
  size_t rank = 0;
  for (size_t k = 0; k < plan->num_tensors; ++k) {
    rank = std::max(rank, static_cast<size_t>(plan->tensors[k]->dim()));
  }
  plan->index_shape.ndim = rank;
  for (size_t j = 0; j < rank; ++j) {
    plan->index_shape.sizes[j] = 1;
  }
  for (size_t k = 0; k < plan->num_tensors; ++k) {
    const Tensor& t = *plan->tensors[k];
    int64_t own[kMaxDims];
    tensor_strides(t, own);
    for (size_t j = 0; j < rank; ++j) {
      plan->tensor_strides_[k][j] = 0;
    }
    for (int64_t j = 0; j < t.dim(); ++j) {
      const size_t pos = rank - t.dim() + j;
      const SizesType size = t.size(j);
      SizesType& target = plan->index_shape.sizes[pos];
      if (size != 1 && target != 1 && size != target) {
        fail_arg(ctx, op, "index tensors do not broadcast together");
        return false;
      }
      target = size != 1 ? size : target;
      plan->tensor_strides_[k][pos] = size == 1 ? 0 : own[j];
    }
  }
  tensor_strides(self, plan->self_strides);
  // Lay out the result dims.
  auto add_self_dim = [&](int64_t d) {
    plan->self_dim[plan->shape.ndim] = d;
    plan->shape.push_back(self.size(d));
  };
  auto add_index_dims = [&]() {
    for (size_t j = 0; j < rank; ++j) {
      plan->self_dim[plan->shape.ndim] = -1;
      plan->index_dim[plan->shape.ndim] = static_cast<int64_t>(j);
      plan->shape.push_back(plan->index_shape.sizes[j]);
    }
  };
  if (rank + self.dim() - plan->num_tensors > kMaxDims) {
    fail_arg(ctx, op, "result has too many dims");
    return false;
  }
  if (!adjacent) {
    add_index_dims();
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (adjacent && d == first) {
      add_index_dims();
    }
    const bool indexed =
        d < static_cast<int64_t>(indices.size()) && indices[d].has_value();
    if (!indexed) {
      add_self_dim(d);
    }
  }
  return true;
}

// Calls fn(result_linear, self_offset) for each element of the result,
// with self_offset in elements; false on an out-of-range index.
template <typename Fn>
bool walk_plan(KernelRuntimeContext& ctx,
               const char* op,
               const Tensor& self,
               const IndexPlan& plan,
               Fn fn) {
  int64_t counter[kMaxDims] = {};
  const int64_t total = plan.shape.numel();
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t offset = 0;
    int64_t index_coord[kMaxDims] = {};
    for (size_t d = 0; d < plan.shape.ndim; ++d) {
      if (plan.self_dim[d] >= 0) {
        offset += counter[d] * plan.self_strides[plan.self_dim[d]];
      } else {
        index_coord[plan.index_dim[d]] = counter[d];
      }
    }
    for (size_t k = 0; k < plan.num_tensors; ++k) {
      const Tensor& t = *plan.tensors[k];
      int64_t pos = 0;
      for (size_t j = 0; j < plan.index_shape.ndim; ++j) {
        pos += index_coord[j] * plan.tensor_strides_[k][j];
      }
      int64_t v = t.scalar_type() == ScalarType::Long
                      ? t.const_data_ptr<int64_t>()[pos]
                      : t.const_data_ptr<int32_t>()[pos];
      const int64_t size = self.size(plan.indexed_dim[k]);
      if (v < -size || v >= size) {
        fail_arg(ctx,
                 op,
                 "index %" PRId64 " is out of range for dim %" PRId64
                 " of size %" PRId64,
                 v,
                 plan.indexed_dim[k],
                 size);
        return false;
      }
      v = v < 0 ? v + size : v;
      offset += v * plan.self_strides[plan.indexed_dim[k]];
    }
    fn(linear, offset);
    for (int64_t d = static_cast<int64_t>(plan.shape.ndim) - 1; d >= 0; --d) {
      if (++counter[d] < plan.shape.sizes[d]) {
        break;
      }
      counter[d] = 0;
    }
  }
  return true;
}

} // namespace

Tensor& index_tensor_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         OptTensorList indices,
                         Tensor& out) {
  const char* op = "index.Tensor_out";
  IndexPlan plan;
  if (!check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self, &out}) ||
      !make_index_plan(ctx, op, self, indices, &plan) ||
      !resize_out(ctx, op, "out", out, plan.shape.ref())) {
    return out;
  }
  const size_t elem = self.element_size();
  const char* in = static_cast<const char*>(self.const_data_ptr());
  char* o = static_cast<char*>(out.mutable_data_ptr());
  walk_plan(ctx, op, self, plan, [&](int64_t linear, int64_t offset) {
    std::memcpy(o + linear * elem, in + offset * elem, elem);
  });
  return out;
}

Tensor& index_put_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      OptTensorList indices,
                      const Tensor& values,
                      bool accumulate,
                      Tensor& out) {
  const char* op = "index_put.out";
  IndexPlan plan;
  if (!check_same_dtype(ctx, op, "values", values, self) ||
      !check_same_dtype(ctx, op, "out", out, self) ||
      !check_default_dim_order(ctx, op, {&self, &out}) ||
      !make_index_plan(ctx, op, self, indices, &plan)) {
    return out;
  }
  // values broadcast to the indexed result's shape.
  const Operand source = broadcast_operand(values, plan.shape.ref());
  if (values.dim() > static_cast<ssize_t>(plan.shape.ndim)) {
    fail_arg(ctx, op, "values do not broadcast to the indexed shape");
    return out;
  }
  for (ssize_t i = 0; i < values.dim(); ++i) {
    const SizesType v = values.size(values.dim() - 1 - i);
    const SizesType r = plan.shape.sizes[plan.shape.ndim - 1 - i];
    if (v != 1 && v != r) {
      fail_arg(ctx, op, "values do not broadcast to the indexed shape");
      return out;
    }
  }
  copy_view(ctx, op, self, tensor_view(self), out);
  if (ctx.failure_state() != Error::Ok) {
    return out;
  }
  ET_SWITCH_REALHBBF16_TYPES(self.scalar_type(), ctx, op, T, [&] {
    T* o = out.mutable_data_ptr<T>();
    const T* v = values.const_data_ptr<T>();
    int64_t counter[kMaxDims] = {};
    walk_plan(ctx, op, out, plan, [&](int64_t, int64_t offset) {
      int64_t src = 0;
      for (size_t d = 0; d < plan.shape.ndim; ++d) {
        src += counter[d] * source.strides[d];
      }
      o[offset] =
          accumulate
              ? internal::convert<T>(internal::convert<double>(o[offset]) +
                                     internal::convert<double>(v[src]))
              : v[src];
      for (int64_t d = static_cast<int64_t>(plan.shape.ndim) - 1; d >= 0; --d) {
        if (++counter[d] < plan.shape.sizes[d]) {
          break;
        }
        counter[d] = 0;
      }
    });
  });
  return out;
}

// In place: self[indices] = values (or += with accumulate).
Tensor& index_put_(KernelRuntimeContext& ctx,
                   Tensor& self,
                   OptTensorList indices,
                   const Tensor& values,
                   bool accumulate) {
  return index_put_out(ctx, self, indices, values, accumulate, self);
}

} // namespace native
} // namespace executor
} // namespace torch
