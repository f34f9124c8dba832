#include <executorch/kernels/portable/util/pointwise.h>

namespace torch {
namespace executor {
namespace native {

namespace internal {

bool pointwise_types(KernelRuntimeContext& context,
                     const char* op,
                     ResultKind kind,
                     ScalarType common,
                     const Tensor& out,
                     ScalarType* compute) {
  if (!is_supported_dtype(common) || !is_supported_dtype(out.scalar_type())) {
    fail_arg(context,
             op,
             "unsupported dtype %s (out %s)",
             ::executorch::runtime::toString(common),
             ::executorch::runtime::toString(out.scalar_type()));
    return false;
  }
  switch (kind) {
    case ResultKind::kPromoted:
      *compute = compute_type(common);
      return check_can_cast(context, op, common, out);
    case ResultKind::kBool:
      *compute = compute_type(common);
      return true;
    case ResultKind::kFloating: {
      // Compute in out's floating type, so float16 results round once.
      const ScalarType result =
          ::executorch::runtime::isFloatingType(out.scalar_type())
              ? out.scalar_type()
              : ScalarType::Float;
      *compute = compute_type(result);
      return check_can_cast(context, op, result, out);
    }
  }
  return false;
}

} // namespace internal

bool check_not_bool(KernelRuntimeContext& context,
                    const char* op,
                    const char* arg_name,
                    ScalarType t) {
  if (t != ScalarType::Bool) {
    return true;
  }
  fail_arg(context, op, "'%s' must not be bool", arg_name);
  return false;
}

} // namespace native
} // namespace executor
} // namespace torch
