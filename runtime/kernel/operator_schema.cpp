#include <executorch/runtime/kernel/operator_schema.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

namespace {

OperatorSchema registered_schemas[ET_MAX_REGISTERED_SCHEMAS];
size_t num_registered_schemas = 0;

} // namespace

const char* arg_kind_name(ArgKind kind) {
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

Error register_operator_schemas(Span<const OperatorSchema> schemas) {
  size_t added = 0;
  for (size_t i = 0; i < schemas.size(); ++i) {
    ET_CHECK_OR_RETURN_ERROR(schemas[i].name != nullptr,
                             InvalidArgument,
                             "Operator schema %zu has no name",
                             i);
    added += get_operator_schema(schemas[i].name) == nullptr;
  }
  ET_CHECK_OR_RETURN_ERROR(
      num_registered_schemas + added <= ET_MAX_REGISTERED_SCHEMAS,
      RegistrationExceedingMaxKernels,
      "Registering %zu operator schemas would exceed the limit of %d "
      "(raise ET_MAX_REGISTERED_SCHEMAS)",
      added,
      ET_MAX_REGISTERED_SCHEMAS);
  for (const OperatorSchema& schema : schemas) {
    if (get_operator_schema(schema.name) == nullptr) {
      registered_schemas[num_registered_schemas++] = schema;
    }
  }
  return Error::Ok;
}

const OperatorSchema* get_operator_schema(const char* name) {
  for (size_t i = 0; i < num_registered_schemas; ++i) {
    if (std::strcmp(registered_schemas[i].name, name) == 0) {
      return &registered_schemas[i];
    }
  }
  return nullptr;
}

} // namespace runtime
} // namespace executorch
