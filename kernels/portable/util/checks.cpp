#include <executorch/kernels/portable/util/checks.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace torch {
namespace executor {
namespace native {

using ::executorch::runtime::isFloatingType;
using ::executorch::runtime::isIntegralType;
using ::executorch::runtime::toString;

int64_t Shape::numel() const {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; ++i) {
    n *= sizes[i];
  }
  return n;
}

const char* format_sizes(ArrayRef<SizesType> sizes, char* buffer, size_t size) {
  size_t used = 0;
  used += snprintf(buffer, size, "[");
  for (size_t i = 0; i < sizes.size() && used < size; ++i) {
    used += snprintf(buffer + used,
                     size - used,
                     i == 0 ? "%d" : ", %d",
                     static_cast<int>(sizes[i]));
  }
  if (used < size) {
    snprintf(buffer + used, size - used, "]");
  }
  return buffer;
}

void fail_arg(KernelRuntimeContext& context,
              const char* op,
              const char* format,
              ...) {
  char message[256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  ET_LOG(Error, "%s: %s", op, message);
  (void)message; // unused when logging is compiled out
  context.fail(Error::InvalidArgument);
}

bool resize_out(KernelRuntimeContext& context,
                const char* op,
                const char* arg_name,
                const Tensor& out,
                ArrayRef<SizesType> sizes) {
  if (::executorch::runtime::resize_tensor(out, sizes) == Error::Ok) {
    return true;
  }
  char have[96];
  char want[96];
  fail_arg(context,
           op,
           "cannot resize '%s' from %s to %s",
           arg_name,
           format_sizes(out.sizes(), have, sizeof(have)),
           format_sizes(sizes, want, sizeof(want)));
  return false;
}

bool normalize_dim(KernelRuntimeContext& context,
                   const char* op,
                   int64_t dim,
                   int64_t rank,
                   int64_t* result) {
  const int64_t effective = rank == 0 ? 1 : rank;
  if (dim < -effective || dim >= effective) {
    fail_arg(context,
             op,
             "dim %" PRId64 " is out of range for a tensor of rank %" PRId64,
             dim,
             rank);
    return false;
  }
  *result = dim < 0 ? dim + effective : dim;
  return true;
}

bool check_dtype(KernelRuntimeContext& context,
                 const char* op,
                 const char* arg_name,
                 const Tensor& t,
                 ScalarType expected) {
  if (t.scalar_type() == expected) {
    return true;
  }
  fail_arg(context,
           op,
           "'%s' has dtype %s, expected %s",
           arg_name,
           toString(t.scalar_type()),
           toString(expected));
  return false;
}

bool check_same_dtype(KernelRuntimeContext& context,
                      const char* op,
                      const char* arg_name,
                      const Tensor& t,
                      const Tensor& reference) {
  return check_dtype(context, op, arg_name, t, reference.scalar_type());
}

bool check_rank(KernelRuntimeContext& context,
                const char* op,
                const char* arg_name,
                const Tensor& t,
                std::initializer_list<int64_t> allowed_ranks) {
  for (int64_t rank : allowed_ranks) {
    if (t.dim() == rank) {
      return true;
    }
  }
  fail_arg(context,
           op,
           "'%s' has unsupported rank %zd",
           arg_name,
           static_cast<ssize_t>(t.dim()));
  return false;
}

bool check_default_dim_order(KernelRuntimeContext& context,
                             const char* op,
                             std::initializer_list<const Tensor*> tensors) {
  size_t index = 0;
  for (const Tensor* t : tensors) {
    if (!::executorch::runtime::tensor_is_contiguous(*t)) {
      fail_arg(context,
               op,
               "tensor argument %zu must have the default dim order",
               index);
      return false;
    }
    ++index;
  }
  return true;
}

bool can_cast(ScalarType from, ScalarType to) {
  if (isFloatingType(from) && isIntegralType(to, /*include_bool=*/true)) {
    return false;
  }
  return !(from != ScalarType::Bool && to == ScalarType::Bool);
}

bool check_can_cast(KernelRuntimeContext& context,
                    const char* op,
                    ScalarType from,
                    const Tensor& out) {
  if (can_cast(from, out.scalar_type())) {
    return true;
  }
  fail_arg(context,
           op,
           "result type %s cannot be stored in 'out' of dtype %s",
           toString(from),
           toString(out.scalar_type()));
  return false;
}

ScalarType promote_with_scalar(ScalarType t, const Scalar& s) {
  if (s.isFloatingPoint() && !isFloatingType(t)) {
    return ScalarType::Float;
  }
  if (s.isIntegral(/*include_bool=*/false) && t == ScalarType::Bool) {
    return ScalarType::Long;
  }
  return t;
}

bool is_supported_dtype(ScalarType t) {
  switch (t) {
#define ET_SUPPORTED_CASE(ctype, name) case ScalarType::name:
    ET_FORALL_SCALAR_TYPES(ET_SUPPORTED_CASE)
#undef ET_SUPPORTED_CASE
    return true;
    default:
      return false;
  }
}

} // namespace native
} // namespace executor
} // namespace torch
