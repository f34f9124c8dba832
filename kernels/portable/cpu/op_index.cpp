// Advanced indexing: index.Tensor (gather by integer index tensors) and
// index_put (scatter into a copy of self). Index tensors broadcast
// together; None entries keep a whole dim. When the indexed dims are
// adjacent the broadcast index dims replace them in place, otherwise they
// go first, as in PyTorch. A bool mask indexes as many dims as it has, at
// the coordinates of its true elements.

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
  Shape index_shape;           // broadcast shape of the index sources
  int64_t self_strides[kMaxDims];
  // Per index source (one per indexed self dim): its int64/int32 values,
  // the self dim it indexes and its strides in the broadcast index shape.
  const void* index_data[kMaxDims];
  bool index_is_long[kMaxDims];
  int64_t indexed_dim[kMaxDims];
  int64_t index_strides[kMaxDims][kMaxDims];
  size_t num_tensors = 0;
};

// An index source before broadcasting: values, shape and strides.
struct IndexSource {
  const void* data;
  bool is_long;
  Shape shape;
  int64_t strides[kMaxDims];
};

// A bool (or uint8) mask over self dims [dim, dim + mask.dim()) indexes
// them like the coordinates of its true elements: one 1-d int64 source per
// masked dim, of length = number of trues, stored in temp memory as
// [count][mask.dim()] so source j reads with stride mask.dim().
bool mask_to_sources(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     const Tensor& mask,
                     size_t position,
                     int64_t dim,
                     IndexSource* sources) {
  const int64_t rank = mask.dim(); // the caller checked it fits self
  for (int64_t j = 0; j < rank; ++j) {
    if (mask.size(j) != self.size(dim + j)) {
      fail_arg(ctx,
               op,
               "mask %zu has size %zd at dim %" PRId64
               ", self has %zd at dim %" PRId64,
               position,
               static_cast<ssize_t>(mask.size(j)),
               j,
               static_cast<ssize_t>(self.size(dim + j)),
               dim + j);
      return false;
    }
  }
  const uint8_t* flags = static_cast<const uint8_t*>(mask.const_data_ptr());
  int64_t count = 0;
  for (ssize_t i = 0; i < mask.numel(); ++i) {
    count += flags[i] != 0;
  }
  auto temp =
      ctx.allocate_temp(static_cast<size_t>(count * rank + 1) * sizeof(int64_t),
                        alignof(int64_t));
  if (!temp.ok()) {
    fail_arg(ctx,
             op,
             "mask %zu needs temp memory for %" PRId64 " coordinates",
             position,
             count * rank);
    return false;
  }
  int64_t* coords = static_cast<int64_t*>(*temp);
  int64_t counter[kMaxDims] = {};
  int64_t* next = coords;
  for (ssize_t i = 0; i < mask.numel(); ++i) {
    if (flags[i] != 0) {
      for (int64_t j = 0; j < rank; ++j) {
        *next++ = counter[j];
      }
    }
    for (int64_t j = rank - 1; j >= 0; --j) {
      if (++counter[j] < mask.size(j)) {
        break;
      }
      counter[j] = 0;
    }
  }
  for (int64_t j = 0; j < rank; ++j) {
    IndexSource& source = sources[j];
    source.data = coords + j;
    source.is_long = true;
    source.shape.ndim = 0;
    source.shape.push_back(count);
    source.strides[0] = rank;
  }
  return true;
}

bool make_index_plan(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& self,
                     OptTensorList indices,
                     IndexPlan* plan) {
  IndexSource sources[kMaxDims];
  bool indexed[kMaxDims] = {};
  int64_t first = -1;
  int64_t last = -1;
  bool adjacent = true;
  int64_t dim = 0; // the self dim the next index entry starts at
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i].has_value()) {
      ++dim;
      continue;
    }
    const Tensor& t = *indices[i];
    const ScalarType type = t.scalar_type();
    const bool is_mask = type == ScalarType::Bool || type == ScalarType::Byte;
    if (!is_mask && type != ScalarType::Long && type != ScalarType::Int) {
      fail_arg(ctx,
               op,
               "index %zu has dtype %s; expected Long, Int, Bool or Byte",
               i,
               ::executorch::runtime::toString(type));
      return false;
    }
    const int64_t covered = is_mask ? t.dim() : 1;
    if (dim + covered > self.dim()) {
      fail_arg(ctx,
               op,
               "too many indices for a rank-%zd tensor",
               static_cast<ssize_t>(self.dim()));
      return false;
    }
    if (!check_default_dim_order(ctx, op, {&t})) {
      return false;
    }
    IndexSource* mine = sources + plan->num_tensors;
    if (is_mask) {
      if (!mask_to_sources(ctx, op, self, t, i, dim, mine)) {
        return false;
      }
    } else {
      mine->data = t.const_data_ptr();
      mine->is_long = type == ScalarType::Long;
      mine->shape.ndim = 0;
      for (ssize_t j = 0; j < t.dim(); ++j) {
        mine->shape.push_back(t.size(j));
      }
      tensor_strides(t, mine->strides);
    }
    for (int64_t j = 0; j < covered; ++j) {
      if (last >= 0 && dim != last + 1) {
        adjacent = false;
      }
      first = first < 0 ? dim : first;
      last = dim;
      indexed[dim] = true;
      plan->indexed_dim[plan->num_tensors++] = dim++;
    }
  }
  if (dim > self.dim()) {
    fail_arg(ctx,
             op,
             "%zu indices for a rank-%zd tensor",
             indices.size(),
             static_cast<ssize_t>(self.dim()));
    return false;
  }
  if (plan->num_tensors == 0) {
    fail_arg(ctx, op, "needs at least one index tensor");
    return false;
  }
  // Broadcast the index sources.
  size_t rank = 0;
  for (size_t k = 0; k < plan->num_tensors; ++k) {
    rank = std::max(rank, sources[k].shape.ndim);
  }
  plan->index_shape.ndim = rank;
  for (size_t j = 0; j < rank; ++j) {
    plan->index_shape.sizes[j] = 1;
  }
  for (size_t k = 0; k < plan->num_tensors; ++k) {
    const IndexSource& source = sources[k];
    plan->index_data[k] = source.data;
    plan->index_is_long[k] = source.is_long;
    for (size_t j = 0; j < rank; ++j) {
      plan->index_strides[k][j] = 0;
    }
    for (size_t j = 0; j < source.shape.ndim; ++j) {
      const size_t pos = rank - source.shape.ndim + j;
      const SizesType size = source.shape.sizes[j];
      SizesType& target = plan->index_shape.sizes[pos];
      if (size != 1 && target != 1 && size != target) {
        fail_arg(ctx, op, "index tensors do not broadcast together");
        return false;
      }
      target = size != 1 ? size : target;
      plan->index_strides[k][pos] = size == 1 ? 0 : source.strides[j];
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
    if (!indexed[d]) {
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
      int64_t pos = 0;
      for (size_t j = 0; j < plan.index_shape.ndim; ++j) {
        pos += index_coord[j] * plan.index_strides[k][j];
      }
      int64_t v = plan.index_is_long[k]
                      ? static_cast<const int64_t*>(plan.index_data[k])[pos]
                      : static_cast<const int32_t*>(plan.index_data[k])[pos];
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
