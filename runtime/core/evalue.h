#pragma once

// EValue: one slot of a method's value table. It holds None, a scalar, a
// string, a tensor or a list. Lists of ints and tensors are "boxed": they
// point at other EValues, so a change to an element (a symbolic size computed
// at run time, a tensor resized by a kernel) is seen through every list that
// holds it.

#include <optional>
#include <string_view>
#include <type_traits>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/core/tag.h>
#include <executorch/runtime/platform/assert.h>

namespace executorch {
namespace runtime {

class EValue;

// A list whose elements live in other EValues. `unwrapped` is scratch space
// of the same length that get() fills with the current element values.
template <typename T>
class BoxedEvalueList {
 public:
  BoxedEvalueList() = default;
  BoxedEvalueList(EValue** wrapped, T* unwrapped, size_t size)
      : wrapped_(wrapped), unwrapped_(unwrapped), size_(size) {}

  ArrayRef<T> get() const;
  size_t size() const {
    return size_;
  }
  EValue* const* wrapped() const {
    return wrapped_;
  }

 private:
  EValue** wrapped_ = nullptr;
  T* unwrapped_ = nullptr;
  size_t size_ = 0;
};

template <>
inline ArrayRef<int64_t> BoxedEvalueList<int64_t>::get() const;
template <>
inline ArrayRef<::executorch::aten::Tensor>
BoxedEvalueList<::executorch::aten::Tensor>::get() const;
template <>
inline ArrayRef<std::optional<::executorch::aten::Tensor>>
BoxedEvalueList<std::optional<::executorch::aten::Tensor>>::get() const;

class EValue {
 public:
  using Tensor = ::executorch::aten::Tensor;
  using Scalar = ::executorch::aten::Scalar;

  EValue() : tag(Tag::None) {}
  /* implicit */ EValue(int64_t value) : tag(Tag::Int) {
    payload.as_int = value;
  }
  /* implicit */ EValue(double value) : tag(Tag::Double) {
    payload.as_double = value;
  }
  /* implicit */ EValue(bool value) : tag(Tag::Bool) {
    payload.as_bool = value;
  }
  /* implicit */ EValue(Scalar s) {
    if (s.isFloatingPoint()) {
      tag = Tag::Double;
      payload.as_double = s.to<double>();
    } else if (s.isBoolean()) {
      tag = Tag::Bool;
      payload.as_bool = s.to<bool>();
    } else {
      tag = Tag::Int;
      payload.as_int = s.to<int64_t>();
    }
  }
  /* implicit */ EValue(Tensor t) : tag(Tag::Tensor) {
    new (&payload.as_tensor) Tensor(t);
  }
  // From anything that dereferences to a Tensor, such as the smart pointer
  // extension::TensorPtr: the EValue refers to the pointed-to tensor, which
  // must outlive it.
  template <typename TensorPointer,
            typename = std::enable_if_t<std::is_convertible<
                decltype(*std::declval<const TensorPointer&>()),
                const Tensor&>::value>>
  /* implicit */ EValue(const TensorPointer& tensor)
      : EValue(Tensor(*tensor)) {}
  EValue(const char* data, size_t size) : tag(Tag::String) {
    payload.as_string = std::string_view(data, size);
  }
  /* implicit */ EValue(BoxedEvalueList<int64_t> list) : tag(Tag::ListInt) {
    payload.as_int_list = list;
  }
  /* implicit */ EValue(BoxedEvalueList<Tensor> list) : tag(Tag::ListTensor) {
    payload.as_tensor_list = list;
  }
  /* implicit */ EValue(BoxedEvalueList<std::optional<Tensor>> list)
      : tag(Tag::ListOptionalTensor) {
    payload.as_optional_tensor_list = list;
  }
  /* implicit */ EValue(ArrayRef<bool> list) : tag(Tag::ListBool) {
    payload.as_bool_list = list;
  }
  /* implicit */ EValue(ArrayRef<double> list) : tag(Tag::ListDouble) {
    payload.as_double_list = list;
  }

  Tag tag;

  bool isNone() const {
    return tag == Tag::None;
  }
  bool isInt() const {
    return tag == Tag::Int;
  }
  bool isDouble() const {
    return tag == Tag::Double;
  }
  bool isBool() const {
    return tag == Tag::Bool;
  }
  bool isScalar() const {
    return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool;
  }
  bool isTensor() const {
    return tag == Tag::Tensor;
  }
  bool isString() const {
    return tag == Tag::String;
  }
  bool isIntList() const {
    return tag == Tag::ListInt;
  }
  bool isBoolList() const {
    return tag == Tag::ListBool;
  }
  bool isDoubleList() const {
    return tag == Tag::ListDouble;
  }
  bool isTensorList() const {
    return tag == Tag::ListTensor;
  }
  bool isListOptionalTensor() const {
    return tag == Tag::ListOptionalTensor;
  }

  int64_t toInt() const {
    check_tag(Tag::Int);
    return payload.as_int;
  }
  double toDouble() const {
    check_tag(Tag::Double);
    return payload.as_double;
  }
  bool toBool() const {
    check_tag(Tag::Bool);
    return payload.as_bool;
  }
  Scalar toScalar() const {
    switch (tag) {
      case Tag::Int:
        return Scalar(payload.as_int);
      case Tag::Double:
        return Scalar(payload.as_double);
      case Tag::Bool:
        return Scalar(payload.as_bool);
      default:
        ET_CHECK_MSG(false, "EValue is not a Scalar (tag %d)", (int)tag);
    }
    return Scalar();
  }
  Tensor& toTensor() {
    check_tag(Tag::Tensor);
    return payload.as_tensor;
  }
  const Tensor& toTensor() const {
    check_tag(Tag::Tensor);
    return payload.as_tensor;
  }
  std::string_view toString() const {
    check_tag(Tag::String);
    return payload.as_string;
  }
  ArrayRef<int64_t> toIntList() const {
    check_tag(Tag::ListInt);
    return payload.as_int_list.get();
  }
  ArrayRef<bool> toBoolList() const {
    check_tag(Tag::ListBool);
    return payload.as_bool_list;
  }
  ArrayRef<double> toDoubleList() const {
    check_tag(Tag::ListDouble);
    return payload.as_double_list;
  }
  ArrayRef<Tensor> toTensorList() const {
    check_tag(Tag::ListTensor);
    return payload.as_tensor_list.get();
  }
  ArrayRef<std::optional<Tensor>> toListOptionalTensor() const {
    check_tag(Tag::ListOptionalTensor);
    return payload.as_optional_tensor_list.get();
  }

  // Typed access used by generated kernel wrappers: to<Tensor>(),
  // to<int64_t>(), to<std::optional<Tensor>>() and so on.
  template <typename T>
  T to() const;

  template <typename T>
  std::optional<T> toOptional() const {
    if (isNone()) {
      return std::nullopt;
    }
    return this->to<T>();
  }

 private:
  void check_tag(Tag expected) const {
    ET_CHECK_MSG(tag == expected,
                 "EValue has tag %s, expected %s",
                 tag_to_string(tag),
                 tag_to_string(expected));
  }

  union Payload {
    Payload() : as_int(0) {}
    int64_t as_int;
    double as_double;
    bool as_bool;
    Tensor as_tensor;
    std::string_view as_string;
    BoxedEvalueList<int64_t> as_int_list;
    BoxedEvalueList<Tensor> as_tensor_list;
    BoxedEvalueList<std::optional<Tensor>> as_optional_tensor_list;
    ArrayRef<bool> as_bool_list;
    ArrayRef<double> as_double_list;
  } payload;
};

#define ET_EVALUE_TO(T, method)    \
  template <>                      \
  inline T EValue::to<T>() const { \
    return method();               \
  }
ET_EVALUE_TO(::executorch::aten::Tensor, toTensor)
ET_EVALUE_TO(int64_t, toInt)
ET_EVALUE_TO(double, toDouble)
ET_EVALUE_TO(bool, toBool)
ET_EVALUE_TO(::executorch::aten::Scalar, toScalar)
ET_EVALUE_TO(std::string_view, toString)
ET_EVALUE_TO(ArrayRef<int64_t>, toIntList)
ET_EVALUE_TO(ArrayRef<bool>, toBoolList)
ET_EVALUE_TO(ArrayRef<double>, toDoubleList)
ET_EVALUE_TO(ArrayRef<::executorch::aten::Tensor>, toTensorList)
ET_EVALUE_TO(ArrayRef<std::optional<::executorch::aten::Tensor>>,
             toListOptionalTensor)
#undef ET_EVALUE_TO

template <>
inline ::executorch::aten::ScalarType
EValue::to<::executorch::aten::ScalarType>() const {
  return static_cast<::executorch::aten::ScalarType>(toInt());
}

#define ET_EVALUE_TO_OPTIONAL(T)                                 \
  template <>                                                    \
  inline std::optional<T> EValue::to<std::optional<T>>() const { \
    return toOptional<T>();                                      \
  }
ET_EVALUE_TO_OPTIONAL(::executorch::aten::Tensor)
ET_EVALUE_TO_OPTIONAL(int64_t)
ET_EVALUE_TO_OPTIONAL(double)
ET_EVALUE_TO_OPTIONAL(bool)
ET_EVALUE_TO_OPTIONAL(::executorch::aten::Scalar)
ET_EVALUE_TO_OPTIONAL(::executorch::aten::ScalarType)
ET_EVALUE_TO_OPTIONAL(std::string_view)
ET_EVALUE_TO_OPTIONAL(ArrayRef<int64_t>)
ET_EVALUE_TO_OPTIONAL(ArrayRef<double>)
ET_EVALUE_TO_OPTIONAL(ArrayRef<bool>)
#undef ET_EVALUE_TO_OPTIONAL

template <>
inline ArrayRef<int64_t> BoxedEvalueList<int64_t>::get() const {
  for (size_t i = 0; i < size_; ++i) {
    unwrapped_[i] = wrapped_[i]->toInt();
  }
  return ArrayRef<int64_t>(unwrapped_, size_);
}

template <>
inline ArrayRef<::executorch::aten::Tensor>
BoxedEvalueList<::executorch::aten::Tensor>::get() const {
  for (size_t i = 0; i < size_; ++i) {
    unwrapped_[i] = wrapped_[i]->toTensor();
  }
  return ArrayRef<::executorch::aten::Tensor>(unwrapped_, size_);
}

template <>
inline ArrayRef<std::optional<::executorch::aten::Tensor>>
BoxedEvalueList<std::optional<::executorch::aten::Tensor>>::get() const {
  for (size_t i = 0; i < size_; ++i) {
    unwrapped_[i] = wrapped_[i] == nullptr
                        ? std::nullopt
                        : wrapped_[i]->toOptional<::executorch::aten::Tensor>();
  }
  return ArrayRef<std::optional<::executorch::aten::Tensor>>(unwrapped_, size_);
}

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::BoxedEvalueList;
using ::executorch::runtime::EValue;
} // namespace executor
} // namespace torch
