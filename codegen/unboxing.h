#pragma once

// Support for the boxed kernel wrappers that codegen/gen.py generates. A
// wrapper first checks that the stack holds what the operator's schema
// expects, so a malformed program fails the kernel with a log line naming
// the operator and argument instead of aborting inside EValue::to*().

#include <optional>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace executorch {
namespace codegen {

// What a schema argument accepts on the stack.
enum class ArgKind : uint8_t {
  Tensor,
  OptionalTensor,
  TensorList,
  OptionalTensorList,
  Int,
  OptionalInt,
  IntList,
  OptionalIntList,
  Double,
  OptionalDouble,
  DoubleList,
  OptionalDoubleList,
  Bool,
  OptionalBool,
  BoolList,
  Scalar,
  OptionalScalar,
  String,
  OptionalString,
  Any,
};

// True if `value` can be unboxed as `kind`.
bool evalue_matches(const runtime::EValue& value, ArgKind kind);

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
