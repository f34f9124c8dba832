#include <executorch/codegen/unboxing.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace codegen {

using runtime::EValue;
using runtime::Tag;

namespace {

// Only log lines use it; logging may be compiled out.
[[maybe_unused]] const char* kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::Tensor:
      return "Tensor";
    case ArgKind::OptionalTensor:
      return "Tensor?";
    case ArgKind::TensorList:
      return "Tensor[]";
    case ArgKind::OptionalTensorList:
      return "Tensor?[]";
    case ArgKind::Int:
      return "int";
    case ArgKind::OptionalInt:
      return "int?";
    case ArgKind::IntList:
      return "int[]";
    case ArgKind::OptionalIntList:
      return "int[]?";
    case ArgKind::Double:
      return "float";
    case ArgKind::OptionalDouble:
      return "float?";
    case ArgKind::DoubleList:
      return "float[]";
    case ArgKind::OptionalDoubleList:
      return "float[]?";
    case ArgKind::Bool:
      return "bool";
    case ArgKind::OptionalBool:
      return "bool?";
    case ArgKind::BoolList:
      return "bool[]";
    case ArgKind::Scalar:
      return "Scalar";
    case ArgKind::OptionalScalar:
      return "Scalar?";
    case ArgKind::String:
      return "str";
    case ArgKind::OptionalString:
      return "str?";
    case ArgKind::Any:
      return "any";
  }
  return "?";
}

} // namespace

bool evalue_matches(const EValue& value, ArgKind kind) {
  const Tag tag = value.tag;
  const bool none = tag == Tag::None;
  switch (kind) {
    case ArgKind::Tensor:
      return tag == Tag::Tensor;
    case ArgKind::OptionalTensor:
      return none || tag == Tag::Tensor;
    case ArgKind::TensorList:
      return tag == Tag::ListTensor;
    case ArgKind::OptionalTensorList:
      return tag == Tag::ListOptionalTensor;
    case ArgKind::Int:
      return tag == Tag::Int;
    case ArgKind::OptionalInt:
      return none || tag == Tag::Int;
    case ArgKind::IntList:
      return tag == Tag::ListInt;
    case ArgKind::OptionalIntList:
      return none || tag == Tag::ListInt;
    case ArgKind::Double:
      return tag == Tag::Double || tag == Tag::Int;
    case ArgKind::OptionalDouble:
      return none || tag == Tag::Double || tag == Tag::Int;
    case ArgKind::DoubleList:
      return tag == Tag::ListDouble;
    case ArgKind::OptionalDoubleList:
      return none || tag == Tag::ListDouble;
    case ArgKind::Bool:
      return tag == Tag::Bool;
    case ArgKind::OptionalBool:
      return none || tag == Tag::Bool;
    case ArgKind::BoolList:
      return tag == Tag::ListBool;
    case ArgKind::Scalar:
      return value.isScalar();
    case ArgKind::OptionalScalar:
      return none || value.isScalar();
    case ArgKind::String:
      return tag == Tag::String;
    case ArgKind::OptionalString:
      return none || tag == Tag::String;
    case ArgKind::Any:
      return true;
  }
  return false;
}

bool check_stack(runtime::KernelRuntimeContext& context,
                 const char* op_name,
                 runtime::Span<EValue*> stack,
                 runtime::Span<const ArgKind> kinds) {
  if (stack.size() < kinds.size() || stack.size() > kinds.size() + 1) {
    ET_LOG(Error,
           "%s: expected %zu arguments (and optionally a result), got %zu",
           op_name,
           kinds.size(),
           stack.size());
    context.fail(runtime::Error::InvalidProgram);
    return false;
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (stack[i] == nullptr || !evalue_matches(*stack[i], kinds[i])) {
      ET_LOG(Error,
             "%s: argument %zu should be %s but is %s",
             op_name,
             i,
             kind_name(kinds[i]),
             stack[i] == nullptr ? "missing"
                                 : runtime::tag_to_string(stack[i]->tag));
      context.fail(runtime::Error::InvalidArgument);
      return false;
    }
  }
  return true;
}

runtime::Error register_once(runtime::Span<const runtime::Kernel> kernels) {
  if (kernels.size() == 0) {
    return runtime::Error::Ok;
  }
  // register_kernels adds all of a table or nothing, so finding its first
  // kernel registered with the same function means the table is in.
  const runtime::Kernel& first = kernels[0];
  for (const runtime::Kernel& k : runtime::get_registered_kernels()) {
    if (k.op_ == first.op_ && std::strcmp(k.name_, first.name_) == 0) {
      return runtime::Error::Ok;
    }
  }
  return runtime::register_kernels(kernels);
}

} // namespace codegen
} // namespace executorch
