#pragma once

// What each argument of an operator is (its schema's argument kinds), kept
// next to the kernel registry. Generated kernel libraries register the
// schemas of their operators; Method checks every KernelCall's arguments
// against them once, at load, so that a program passing an int where the
// schema says Tensor, or too few arguments, is refused with a log line
// naming the instruction and argument instead of reaching the kernel.
//
// Storage is a fixed-size static table (no heap); registration has the same
// rules as register_kernels().

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>

#ifndef ET_MAX_REGISTERED_SCHEMAS
#define ET_MAX_REGISTERED_SCHEMAS 2000
#endif

namespace executorch {
namespace runtime {

// What a schema argument accepts.
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

// The schema's spelling of `kind` ("Tensor?", "int[]", ...).
const char* arg_kind_name(ArgKind kind);

// True if `value` can be unboxed as `kind`.
bool evalue_matches(const EValue& value, ArgKind kind);

// A kernel library's load-time check of an operator's arguments: `args`
// are a KernelCall's arguments and fixed[a] says whether args[a] holds the
// same value at every call (a constant tensor, or a number that no
// instruction and no caller writes). It checks what it can from the fixed
// ones (e.g. a quantize's scale and zero point) as its kernel would, and
// on a bad value logs it (naming the operator and the argument) and
// returns false; Method::load then refuses the program (InvalidProgram),
// naming the instruction.
using FixedArgsCheck = bool (*)(Span<EValue* const> args, const bool* fixed);

// An operator ("namespace::name.overload") and the kinds of its arguments,
// out arguments included. A KernelCall passes these, optionally followed by
// one more value: the emitter passes an out variant's out arguments again
// as its result.
// Every member has an initializer so that the registry's table is
// constant-initialized: libraries register from static initializers, which
// may run before the registry's translation unit is initialized.
struct OperatorSchema {
  const char* name = nullptr;
  Span<const ArgKind> args;
  // Optional: checks the argument values a program fixes at load (see
  // FixedArgsCheck), so that constants every call would refuse fail the
  // load instead.
  FixedArgsCheck check_fixed_args = nullptr;
  // Bit a set: the kernel writes argument a (the schema marks it `!`: out
  // arguments and in-place ones). Method::load refuses a call that passes a
  // constant tensor there: constants may be a read-only mapping of the file,
  // and every method shares them. Arguments past 64 are not described.
  uint64_t written_args = 0;
};

// Adds schemas to the table. A name already registered is skipped (several
// kernel libraries implement the same operators); nothing is added when the
// table would overflow (RegistrationExceedingMaxKernels).
ET_NODISCARD Error register_operator_schemas(Span<const OperatorSchema> schemas);

// The schema registered for `name`, or nullptr.
const OperatorSchema* get_operator_schema(const char* name);

} // namespace runtime
} // namespace executorch
