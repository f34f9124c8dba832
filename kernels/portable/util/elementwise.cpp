#include <executorch/kernels/portable/util/elementwise.h>

namespace torch {
namespace executor {
namespace native {

void tensor_strides(const Tensor& t, int64_t* strides) {
  const size_t rank = static_cast<size_t>(t.dim());
  const auto dim_order = t.dim_order();
  const bool has_order =
      dim_order.data() != nullptr && dim_order.size() == rank;
  int64_t stride = 1;
  for (size_t i = rank; i-- > 0;) {
    const size_t d = has_order ? dim_order[i] : i;
    strides[d] = stride;
    stride *= t.size(d) > 0 ? t.size(d) : 1;
  }
}

Operand broadcast_operand(const Tensor& t, ArrayRef<SizesType> out_sizes) {
  Operand op;
  op.data = static_cast<const char*>(t.const_data_ptr());
  op.dtype = t.scalar_type();
  int64_t own[kMaxDims];
  tensor_strides(t, own);
  const size_t rank = static_cast<size_t>(t.dim());
  const size_t out_rank = out_sizes.size();
  for (size_t i = 0; i < rank && i < out_rank; ++i) {
    const size_t d = rank - 1 - i;
    const size_t od = out_rank - 1 - i;
    op.strides[od] = t.size(d) == 1 ? 0 : own[d];
  }
  return op;
}

OutOperand out_operand(const Tensor& t) {
  OutOperand op;
  op.data = static_cast<char*>(t.mutable_data_ptr());
  op.dtype = t.scalar_type();
  tensor_strides(t, op.strides);
  return op;
}

bool broadcast_shape(KernelRuntimeContext& context,
                     const char* op,
                     std::initializer_list<const Tensor*> inputs,
                     Shape* shape) {
  size_t rank = 0;
  for (const Tensor* t : inputs) {
    rank = static_cast<size_t>(t->dim()) > rank ? t->dim() : rank;
  }
  if (rank > kMaxDims) {
    fail_arg(context, op, "rank %zu exceeds the supported %zu", rank, kMaxDims);
    return false;
  }
  shape->ndim = rank;
  for (size_t i = 0; i < rank; ++i) {
    shape->sizes[i] = 1;
  }
  size_t index = 0;
  for (const Tensor* t : inputs) {
    const size_t t_rank = static_cast<size_t>(t->dim());
    for (size_t i = 0; i < t_rank; ++i) {
      const SizesType size = t->size(t_rank - 1 - i);
      SizesType& target = shape->sizes[rank - 1 - i];
      if (size == target || size == 1) {
        continue;
      }
      if (target == 1) {
        target = size;
        continue;
      }
      char have[96];
      char want[96];
      fail_arg(context,
               op,
               "input %zu of shape %s does not broadcast with shape %s",
               index,
               format_sizes(t->sizes(), have, sizeof(have)),
               format_sizes(shape->ref(), want, sizeof(want)));
      return false;
    }
    ++index;
  }
  return true;
}

bool resize_to_broadcast(KernelRuntimeContext& context,
                         const char* op,
                         std::initializer_list<const Tensor*> inputs,
                         const Tensor& out) {
  Shape shape;
  return broadcast_shape(context, op, inputs, &shape) &&
         resize_out(context, op, "out", out, shape.ref());
}

namespace {

int category(ScalarType t) {
  if (t == ScalarType::Bool) {
    return 0;
  }
  return ::executorch::runtime::isFloatingType(t) ? 2 : 1;
}

} // namespace

ScalarType result_type(const Tensor& a, const Tensor& b) {
  const ScalarType ta = a.scalar_type();
  const ScalarType tb = b.scalar_type();
  if ((a.dim() == 0) == (b.dim() == 0)) {
    return ::executorch::runtime::promoteTypes(ta, tb);
  }
  const ScalarType dim_type = a.dim() == 0 ? tb : ta;
  const ScalarType zero_type = a.dim() == 0 ? ta : tb;
  return category(zero_type) > category(dim_type)
             ? ::executorch::runtime::promoteTypes(dim_type, zero_type)
             : dim_type;
}

bool prepare_binary(KernelRuntimeContext& context,
                    const char* op,
                    const Tensor& a,
                    const Tensor& b,
                    const Tensor& out,
                    ScalarType* common) {
  *common = result_type(a, b);
  return check_can_cast(context, op, *common, out) &&
         resize_to_broadcast(context, op, {&a, &b}, out);
}

bool prepare_binary_scalar(KernelRuntimeContext& context,
                           const char* op,
                           const Tensor& a,
                           const Scalar& b,
                           const Tensor& out,
                           ScalarType* common) {
  *common = promote_with_scalar(a.scalar_type(), b);
  return check_can_cast(context, op, *common, out) &&
         resize_like(context, op, out, a);
}

namespace internal {

size_t coalesce(int64_t* sizes,
                size_t ndim,
                int64_t* const* strides,
                size_t num_strides) {
  size_t kept = 0;
  for (size_t d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) {
      continue;
    }
    bool mergeable = kept > 0;
    for (size_t k = 0; k < num_strides && mergeable; ++k) {
      mergeable = strides[k][kept - 1] == strides[k][d] * sizes[d];
    }
    if (mergeable) {
      sizes[kept - 1] *= sizes[d];
      for (size_t k = 0; k < num_strides; ++k) {
        strides[k][kept - 1] = strides[k][d];
      }
      continue;
    }
    sizes[kept] = sizes[d];
    for (size_t k = 0; k < num_strides; ++k) {
      strides[k][kept] = strides[k][d];
    }
    ++kept;
  }
  return kept;
}

} // namespace internal

} // namespace native
} // namespace executor
} // namespace torch
