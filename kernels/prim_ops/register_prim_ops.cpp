#include <executorch/kernels/prim_ops/register_prim_ops.h>

#include <cmath>
#include <cstring>

#include <executorch/codegen/unboxing.h>
#include <executorch/runtime/kernel/kernel_includes.h>

namespace executorch {
namespace kernels {

namespace {

using ::executorch::aten::SizesType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::Error;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Kernel;
using ::executorch::runtime::KernelRuntimeContext;
using ::executorch::runtime::Span;

// Each prim op reads its operands and overwrites the last stack slot with
// the result. Checks name the operator, since a malformed program can hand
// any value to any slot.
bool check_args(KernelRuntimeContext& ctx,
                const char* op,
                Span<EValue*> stack,
                size_t expected) {
  if (stack.size() != expected) {
    ET_LOG(
        Error, "%s: expected %zu values, got %zu", op, expected, stack.size());
    ctx.fail(Error::InvalidProgram);
    return false;
  }
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i] == nullptr) {
      ET_LOG(Error, "%s: value %zu is missing", op, i);
      ctx.fail(Error::InvalidProgram);
      return false;
    }
  }
  return true;
}

bool check_scalar(KernelRuntimeContext& ctx,
                  const char* op,
                  const EValue& v,
                  size_t index) {
  if (v.isInt() || v.isDouble() || v.isBool()) {
    return true;
  }
  ET_LOG(Error,
         "%s: operand %zu should be a scalar but is %s",
         op,
         index,
         ::executorch::runtime::tag_to_string(v.tag));
  ctx.fail(Error::InvalidArgument);
  return false;
}

bool check_tensor(KernelRuntimeContext& ctx,
                  const char* op,
                  const EValue& v,
                  size_t index) {
  if (v.isTensor()) {
    return true;
  }
  ET_LOG(Error,
         "%s: operand %zu should be a tensor but is %s",
         op,
         index,
         ::executorch::runtime::tag_to_string(v.tag));
  ctx.fail(Error::InvalidArgument);
  return false;
}

// Python semantics for int-or-float operands: the result is an int when
// both are ints (bools count as ints), a float otherwise.
bool both_int(const EValue& a, const EValue& b) {
  return !a.isDouble() && !b.isDouble();
}
int64_t as_int(const EValue& v) {
  return v.isBool() ? static_cast<int64_t>(v.toBool()) : v.toInt();
}
double as_double(const EValue& v) {
  return v.isDouble() ? v.toDouble() : static_cast<double>(as_int(v));
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Defines a binary prim op `name` on a, b -> stack[2]. INT_EXPR and
// DOUBLE_EXPR compute the result from (x, y) of type int64_t / double;
// CHECK_ZERO rejects a zero divisor the way Python raises.
#define ET_PRIM_BINARY(fn, name, check_zero, int_expr, double_expr) \
  void fn(KernelRuntimeContext& ctx, Span<EValue*> stack) {         \
    if (!check_args(ctx, name, stack, 3) ||                         \
        !check_scalar(ctx, name, *stack[0], 0) ||                   \
        !check_scalar(ctx, name, *stack[1], 1)) {                   \
      return;                                                       \
    }                                                               \
    const EValue& a = *stack[0];                                    \
    const EValue& b = *stack[1];                                    \
    if (check_zero && as_double(b) == 0.0) {                        \
      ET_LOG(Error, "%s: division by zero", name);                  \
      ctx.fail(Error::InvalidArgument);                             \
      return;                                                       \
    }                                                               \
    if (both_int(a, b)) {                                           \
      const int64_t x = as_int(a);                                  \
      const int64_t y = as_int(b);                                  \
      *stack[2] = EValue(int_expr);                                 \
    } else {                                                        \
      const double x = as_double(a);                                \
      const double y = as_double(b);                                \
      *stack[2] = EValue(double_expr);                              \
    }                                                               \
  }

ET_PRIM_BINARY(prim_add, "executorch_prim::add.Scalar", false, x + y, x + y)
ET_PRIM_BINARY(prim_sub, "executorch_prim::sub.Scalar", false, x - y, x - y)
ET_PRIM_BINARY(prim_mul, "executorch_prim::mul.Scalar", false, x* y, x* y)
ET_PRIM_BINARY(prim_floordiv,
               "executorch_prim::floordiv.Scalar",
               true,
               floor_div(x, y),
               std::floor(x / y))
ET_PRIM_BINARY(prim_mod,
               "executorch_prim::mod.Scalar",
               true,
               floor_mod(x, y),
               x - std::floor(x / y) * y)
ET_PRIM_BINARY(prim_max,
               "executorch_prim::sym_max.Scalar",
               false,
               x > y ? x : y,
               x > y ? x : y)
ET_PRIM_BINARY(prim_min,
               "executorch_prim::sym_min.Scalar",
               false,
               x < y ? x : y,
               x < y ? x : y)
// Comparisons give bools whatever the operand types.
ET_PRIM_BINARY(prim_eq, "executorch_prim::eq.Scalar", false, x == y, x == y)
ET_PRIM_BINARY(prim_gt, "executorch_prim::gt.Scalar", false, x > y, x > y)
ET_PRIM_BINARY(prim_lt, "executorch_prim::lt.Scalar", false, x < y, x < y)
ET_PRIM_BINARY(prim_ge, "executorch_prim::ge.Scalar", false, x >= y, x >= y)
ET_PRIM_BINARY(prim_le, "executorch_prim::le.Scalar", false, x <= y, x <= y)
#undef ET_PRIM_BINARY

// True division always gives a float.
void prim_truediv(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "executorch_prim::truediv.Scalar";
  if (!check_args(ctx, name, stack, 3) ||
      !check_scalar(ctx, name, *stack[0], 0) ||
      !check_scalar(ctx, name, *stack[1], 1)) {
    return;
  }
  *stack[2] = EValue(as_double(*stack[0]) / as_double(*stack[1]));
}

// Defines a unary prim op on a -> stack[1].
#define ET_PRIM_UNARY(fn, name, int_expr, double_expr)      \
  void fn(KernelRuntimeContext& ctx, Span<EValue*> stack) { \
    if (!check_args(ctx, name, stack, 2) ||                 \
        !check_scalar(ctx, name, *stack[0], 0)) {           \
      return;                                               \
    }                                                       \
    if (!stack[0]->isDouble()) {                            \
      const int64_t x = as_int(*stack[0]);                  \
      *stack[1] = EValue(int_expr);                         \
    } else {                                                \
      const double x = stack[0]->toDouble();                \
      *stack[1] = EValue(double_expr);                      \
    }                                                       \
  }

ET_PRIM_UNARY(prim_neg, "executorch_prim::neg.Scalar", -x, -x)
ET_PRIM_UNARY(prim_sym_float,
              "executorch_prim::sym_float.Scalar",
              static_cast<double>(x),
              x)
ET_PRIM_UNARY(prim_sym_int,
              "executorch_prim::sym_int.Scalar",
              x,
              static_cast<int64_t>(std::trunc(x)))
ET_PRIM_UNARY(prim_ceil,
              "executorch_prim::ceil.Scalar",
              x,
              static_cast<int64_t>(std::ceil(x)))
ET_PRIM_UNARY(prim_round,
              "executorch_prim::round.Scalar",
              x,
              static_cast<int64_t>(std::nearbyint(x)))
ET_PRIM_UNARY(prim_trunc,
              "executorch_prim::trunc.Scalar",
              x,
              static_cast<int64_t>(std::trunc(x)))
ET_PRIM_UNARY(prim_sym_not, "executorch_prim::sym_not.Scalar", x == 0, x == 0)
#undef ET_PRIM_UNARY

// sym_ite(b, t, f): t if b else f.
void prim_sym_ite(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "executorch_prim::sym_ite.Scalar";
  if (!check_args(ctx, name, stack, 4) ||
      !check_scalar(ctx, name, *stack[0], 0)) {
    return;
  }
  *stack[3] = as_double(*stack[0]) != 0.0 ? *stack[1] : *stack[2];
}

// Reads (Tensor self, int dim) from the stack: the tensor and `dim` in
// [0, rank); false (context failed) otherwise.
bool tensor_and_dim(KernelRuntimeContext& ctx,
                    const char* name,
                    Span<EValue*> stack,
                    const Tensor** t,
                    int64_t* dim) {
  if (!check_args(ctx, name, stack, 3) ||
      !check_tensor(ctx, name, *stack[0], 0)) {
    return false;
  }
  *t = &stack[0]->toTensor();
  if (!stack[1]->isInt()) {
    ET_LOG(Error, "%s: dim should be an int", name);
    ctx.fail(Error::InvalidArgument);
    return false;
  }
  const int64_t d = stack[1]->toInt();
  const int64_t rank = (*t)->dim();
  if (d < -rank || d >= rank) {
    ET_LOG(Error,
           "%s: dim %lld out of range for rank %lld",
           name,
           static_cast<long long>(d),
           static_cast<long long>(rank));
    ctx.fail(Error::InvalidArgument);
    return false;
  }
  *dim = d < 0 ? d + rank : d;
  return true;
}

// sym_size.int(Tensor self, int dim) -> int
void sym_size(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const Tensor* t = nullptr;
  int64_t dim = 0;
  if (tensor_and_dim(ctx, "aten::sym_size.int", stack, &t, &dim)) {
    *stack[2] = EValue(static_cast<int64_t>(t->size(dim)));
  }
}

// sym_stride.int(Tensor self, int dim) -> int
void sym_stride(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const Tensor* t = nullptr;
  int64_t dim = 0;
  if (tensor_and_dim(ctx, "aten::sym_stride.int", stack, &t, &dim)) {
    *stack[2] = EValue(static_cast<int64_t>(t->strides()[dim]));
  }
}

// sym_storage_offset(Tensor self) -> int: runtime tensors start at their
// data pointer.
void sym_storage_offset(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "aten::sym_storage_offset";
  if (check_args(ctx, name, stack, 2) &&
      check_tensor(ctx, name, *stack[0], 0)) {
    *stack[1] = EValue(int64_t(0));
  }
}

// sym_is_contiguous(Tensor self, MemoryFormat memory_format) -> bool:
// whether self's dim order is that memory format's.
void sym_is_contiguous(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "aten::sym_is_contiguous";
  if (!check_args(ctx, name, stack, 3) ||
      !check_tensor(ctx, name, *stack[0], 0)) {
    return;
  }
  const Tensor& t = stack[0]->toTensor();
  // c10's MemoryFormat codes: 0 contiguous, 2 channels_last.
  const int64_t format = stack[1]->isInt() ? stack[1]->toInt() : 0;
  if (format != 0 && format != 2) {
    ET_LOG(Error,
           "%s: memory format %lld is not supported",
           name,
           static_cast<long long>(format));
    ctx.fail(Error::InvalidArgument);
    return;
  }
  const bool result =
      format == 0
          ? ::executorch::runtime::tensor_is_contiguous(t)
          : t.dim() == 4 && ::executorch::runtime::is_channels_last_dim_order(
                                t.dim_order().data(), t.dim());
  *stack[2] = EValue(result);
}

// sym_numel(Tensor self) -> int
void sym_numel(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "aten::sym_numel";
  if (!check_args(ctx, name, stack, 2) ||
      !check_tensor(ctx, name, *stack[0], 0)) {
    return;
  }
  *stack[1] = EValue(static_cast<int64_t>(stack[0]->toTensor().numel()));
}

// _local_scalar_dense(Tensor self) -> Scalar: the value of a one-element
// tensor.
void local_scalar_dense(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "aten::_local_scalar_dense";
  if (!check_args(ctx, name, stack, 2) ||
      !check_tensor(ctx, name, *stack[0], 0)) {
    return;
  }
  const Tensor& t = stack[0]->toTensor();
  if (t.numel() != 1) {
    ET_LOG(Error, "%s: tensor has %zd elements, expected 1", name, t.numel());
    ctx.fail(Error::InvalidArgument);
    return;
  }
  const auto type = t.scalar_type();
  if (type == ::executorch::aten::ScalarType::Bool) {
    *stack[1] = EValue(*t.const_data_ptr<bool>());
  } else if (::executorch::runtime::isFloatingType(type)) {
    ET_SWITCH_FLOATHBF16_TYPES(type, ctx, name, T, [&] {
      // 16-bit floats convert through float; double keeps its precision.
      using Wide =
          std::conditional_t<std::is_same<T, double>::value, double, float>;
      *stack[1] = EValue(
          static_cast<double>(static_cast<Wide>(*t.const_data_ptr<T>())));
    });
  } else {
    ET_SWITCH_INT_TYPES(type, ctx, name, T, [&] {
      *stack[1] = EValue(static_cast<int64_t>(*t.const_data_ptr<T>()));
    });
  }
}

// et_view.default(Tensor self, int[] size) -> Tensor: makes the out tensor
// alias self's data with a new shape (the emitter uses it instead of a
// view copy when the memory planner lets the two share storage).
void et_view(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "executorch_prim::et_view.default";
  if (!check_args(ctx, name, stack, 3) ||
      !check_tensor(ctx, name, *stack[0], 0) ||
      !check_tensor(ctx, name, *stack[2], 2) || !stack[1]->isIntList()) {
    if (ctx.failure_state() == Error::Ok) {
      ET_LOG(Error, "%s: size should be an int list", name);
      ctx.fail(Error::InvalidArgument);
    }
    return;
  }
  const Tensor& self = stack[0]->toTensor();
  const Tensor& out = stack[2]->toTensor();
  const auto size = stack[1]->toIntList();
  constexpr size_t kMaxDims = 16;
  if (size.size() != static_cast<size_t>(out.dim()) || size.size() > kMaxDims) {
    ET_LOG(Error,
           "%s: size has %zu entries but out has rank %zd",
           name,
           size.size(),
           out.dim());
    ctx.fail(Error::InvalidArgument);
    return;
  }
  // One entry may be -1: inferred from the element count.
  SizesType sizes[kMaxDims];
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
      continue;
    }
    sizes[i] = static_cast<SizesType>(size[i]);
    known *= size[i];
  }
  if (inferred >= 0) {
    sizes[inferred] =
        known == 0 ? 0 : static_cast<SizesType>(self.numel() / known);
    known *= sizes[inferred];
  }
  if (known != self.numel() || self.scalar_type() != out.scalar_type()) {
    ET_LOG(Error,
           "%s: cannot view %zd elements of self as %lld elements of out",
           name,
           self.numel(),
           static_cast<long long>(known));
    ctx.fail(Error::InvalidArgument);
    return;
  }
  if (::executorch::runtime::resize_tensor(
          out, ::executorch::aten::ArrayRef<SizesType>(sizes, size.size())) !=
      Error::Ok) {
    ET_LOG(Error, "%s: cannot resize out", name);
    ctx.fail(Error::InvalidArgument);
    return;
  }
  out.unsafeGetTensorImpl()->set_data(const_cast<void*>(self.const_data_ptr()));
}

// et_copy_index.tensor(Tensor(a!) copy_to, Tensor copy_from, int index):
// copy_to[index] = copy_from, growing copy_to's first dim to index + 1 (the
// stacked output of a map loop).
void et_copy_index(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  const char* name = "executorch_prim::et_copy_index.tensor";
  if (stack.size() < 3 || !check_args(ctx, name, stack, stack.size()) ||
      !check_tensor(ctx, name, *stack[0], 0) ||
      !check_tensor(ctx, name, *stack[1], 1) || !stack[2]->isInt()) {
    if (ctx.failure_state() == Error::Ok) {
      ET_LOG(Error, "%s: expected (Tensor, Tensor, int)", name);
      ctx.fail(Error::InvalidArgument);
    }
    return;
  }
  const Tensor& to = stack[0]->toTensor();
  const Tensor& from = stack[1]->toTensor();
  const int64_t index = stack[2]->toInt();
  constexpr size_t kMaxDims = 16;
  if (to.dim() != from.dim() + 1 || to.dim() > static_cast<ssize_t>(kMaxDims) ||
      to.scalar_type() != from.scalar_type() || index < 0) {
    ET_LOG(Error,
           "%s: copy_from does not fit copy_to at index %lld",
           name,
           static_cast<long long>(index));
    ctx.fail(Error::InvalidArgument);
    return;
  }
  SizesType sizes[kMaxDims];
  sizes[0] = static_cast<SizesType>(index + 1);
  for (ssize_t d = 0; d < from.dim(); ++d) {
    sizes[d + 1] = from.size(d);
  }
  // A dynamic copy_to has exactly index + 1 rows after the call, so a loop
  // run with fewer iterations than the last one returns fewer rows; a
  // static one must already have the row.
  const bool is_static =
      to.shape_dynamism() == ::executorch::runtime::TensorShapeDynamism::STATIC;
  const bool fits = is_static ? index < to.size(0)
                              : (to.size(0) == index + 1 ||
                                 ::executorch::runtime::resize_tensor(
                                     to,
                                     ::executorch::aten::ArrayRef<SizesType>(
                                         sizes, to.dim())) == Error::Ok);
  if (!fits) {
    ET_LOG(Error,
           "%s: copy_to (%zd rows%s) cannot hold row %lld",
           name,
           to.size(0),
           is_static ? ", static" : " at its planned capacity",
           static_cast<long long>(index));
    ctx.fail(Error::InvalidArgument);
    return;
  }
  for (ssize_t d = 0; d < from.dim(); ++d) {
    if (to.size(d + 1) != from.size(d)) {
      ET_LOG(Error, "%s: row shape mismatch at dim %zd", name, d);
      ctx.fail(Error::InvalidArgument);
      return;
    }
  }
  std::memcpy(static_cast<char*>(to.mutable_data_ptr()) + index * from.nbytes(),
              from.const_data_ptr(),
              from.nbytes());
}

const Kernel kPrimOps[] = {
    Kernel("aten::sym_size.int", sym_size),
    Kernel("aten::sym_numel", sym_numel),
    Kernel("aten::sym_stride.int", sym_stride),
    Kernel("aten::sym_storage_offset", sym_storage_offset),
    Kernel("aten::sym_is_contiguous", sym_is_contiguous),
    Kernel("aten::_local_scalar_dense", local_scalar_dense),
    Kernel("executorch_prim::add.Scalar", prim_add),
    Kernel("executorch_prim::sub.Scalar", prim_sub),
    Kernel("executorch_prim::mul.Scalar", prim_mul),
    Kernel("executorch_prim::floordiv.Scalar", prim_floordiv),
    Kernel("executorch_prim::floordiv.int", prim_floordiv),
    Kernel("executorch_prim::truediv.Scalar", prim_truediv),
    Kernel("executorch_prim::mod.Scalar", prim_mod),
    Kernel("executorch_prim::mod.int", prim_mod),
    Kernel("executorch_prim::sym_max.Scalar", prim_max),
    Kernel("executorch_prim::sym_min.Scalar", prim_min),
    Kernel("executorch_prim::eq.Scalar", prim_eq),
    Kernel("executorch_prim::gt.Scalar", prim_gt),
    Kernel("executorch_prim::lt.Scalar", prim_lt),
    Kernel("executorch_prim::ge.Scalar", prim_ge),
    Kernel("executorch_prim::le.Scalar", prim_le),
    Kernel("executorch_prim::neg.Scalar", prim_neg),
    Kernel("executorch_prim::sym_float.Scalar", prim_sym_float),
    Kernel("executorch_prim::sym_int.Scalar", prim_sym_int),
    Kernel("executorch_prim::ceil.Scalar", prim_ceil),
    Kernel("executorch_prim::round.Scalar", prim_round),
    Kernel("executorch_prim::trunc.Scalar", prim_trunc),
    Kernel("executorch_prim::sym_not.Scalar", prim_sym_not),
    Kernel("executorch_prim::sym_ite.Scalar", prim_sym_ite),
    Kernel("executorch_prim::et_view.default", et_view),
    Kernel("executorch_prim::et_copy_index.tensor", et_copy_index),
};

} // namespace

::executorch::runtime::Error register_prim_ops() {
  return ::executorch::codegen::register_once(Span<const Kernel>(kPrimOps));
}

} // namespace kernels
} // namespace executorch
