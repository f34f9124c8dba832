#pragma once

#include <cstdint>

namespace executorch {
namespace runtime {

// Kind of value an EValue holds.
enum class Tag : uint32_t {
  None,
  Tensor,
  String,
  Double,
  Int,
  Bool,
  ListBool,
  ListDouble,
  ListInt,
  ListTensor,
  ListScalar,
  ListOptionalTensor,
};

constexpr const char* tag_to_string(Tag tag) {
  switch (tag) {
    case Tag::None:
      return "None";
    case Tag::Tensor:
      return "Tensor";
    case Tag::String:
      return "String";
    case Tag::Double:
      return "Double";
    case Tag::Int:
      return "Int";
    case Tag::Bool:
      return "Bool";
    case Tag::ListBool:
      return "ListBool";
    case Tag::ListDouble:
      return "ListDouble";
    case Tag::ListInt:
      return "ListInt";
    case Tag::ListTensor:
      return "ListTensor";
    case Tag::ListScalar:
      return "ListScalar";
    case Tag::ListOptionalTensor:
      return "ListOptionalTensor";
  }
  return "Unknown";
}

} // namespace runtime
} // namespace executorch
