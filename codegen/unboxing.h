#pragma once

// Support for the boxed kernel wrappers that codegen/gen.py generates. A
// generated library registers its operators' schemas, which Method checks
// every KernelCall against at load. A wrapper checks its stack again on each
// call (a cheap tag comparison), so a kernel called some other way, or after
// an operator without a schema (a prim op) changed a value's type, fails
// with a log line naming the operator and argument instead of aborting
// inside EValue::to*().

#include <optional>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/kernel/operator_schema.h>

namespace executorch {
namespace codegen {

// Argument kinds live next to the kernel registry, where Method checks
// programs against the registered schemas at load.
using runtime::ArgKind;
using runtime::evalue_matches;

// Checks that `stack` holds one value per schema argument, each matching
// its kind, optionally followed by one more value: the emitter passes an
// out variant's out arguments again as its result (a tensor or a tensor
// list), even when the schema returns nothing. On failure logs the operator
// and argument and fails `context`.
bool check_stack(runtime::KernelRuntimeContext& context,
                 const char* op_name,
                 runtime::Span<runtime::EValue*> stack,
                 runtime::Span<const ArgKind> kinds);

inline double to_double(const runtime::EValue& value) {
  return value.isInt() ? static_cast<double>(value.toInt()) : value.toDouble();
}

inline std::optional<double> to_optional_double(const runtime::EValue& value) {
  if (value.isNone()) {
    return std::nullopt;
  }
  return to_double(value);
}

inline std::optional<int64_t> to_optional_enum(const runtime::EValue& value) {
  if (value.isInt()) {
    return value.toInt();
  }
  return std::nullopt;
}

// Registers `kernels` unless this exact table is already registered, so a
// library's register function may be called more than once.
ET_NODISCARD runtime::Error register_once(
    runtime::Span<const runtime::Kernel> kernels);

} // namespace codegen
} // namespace executorch
