#pragma once

// Facts about ScalarTypes (C++ type, name, category, promotion) and the
// ET_SWITCH_* macros that run a generic lambda with the C++ type matching a
// runtime ScalarType.

#include <cstdint>
#include <type_traits>

#include <executorch/runtime/core/exec_aten/exec_aten.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

using ::executorch::aten::BFloat16;
using ::executorch::aten::Half;
using ::executorch::aten::ScalarType;

// X-macro of the dtypes kernels compute with: (C++ type, ScalarType name).
#define ET_FORALL_SCALAR_TYPES(_)   \
  _(uint8_t, Byte)                  \
  _(int8_t, Char)                   \
  _(int16_t, Short)                 \
  _(int32_t, Int)                   \
  _(int64_t, Long)                  \
  _(::executorch::aten::Half, Half) \
  _(float, Float)                   \
  _(double, Double)                 \
  _(bool, Bool)                     \
  _(::executorch::aten::BFloat16, BFloat16)

template <ScalarType N>
struct ScalarTypeToCppType;

template <typename T>
struct CppTypeToScalarType;

#define ET_SPECIALIZE_TYPE_MAPS(ctype, name)              \
  template <>                                             \
  struct ScalarTypeToCppType<ScalarType::name> {          \
    using type = ctype;                                   \
  };                                                      \
  template <>                                             \
  struct CppTypeToScalarType<ctype> {                     \
    static constexpr ScalarType value = ScalarType::name; \
  };
ET_FORALL_SCALAR_TYPES(ET_SPECIALIZE_TYPE_MAPS)
#undef ET_SPECIALIZE_TYPE_MAPS

inline const char* toString(ScalarType type) {
  switch (type) {
#define ET_SCALAR_TYPE_NAME(ctype, name) \
  case ScalarType::name:                 \
    return #name;
    ET_FORALL_SCALAR_TYPES(ET_SCALAR_TYPE_NAME)
#undef ET_SCALAR_TYPE_NAME
    case ScalarType::ComplexHalf:
      return "ComplexHalf";
    case ScalarType::ComplexFloat:
      return "ComplexFloat";
    case ScalarType::ComplexDouble:
      return "ComplexDouble";
    case ScalarType::UInt16:
      return "UInt16";
    case ScalarType::UInt32:
      return "UInt32";
    case ScalarType::UInt64:
      return "UInt64";
    default:
      return "UNKNOWN_SCALAR";
  }
}

inline bool isFloatingType(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double ||
         t == ScalarType::Half || t == ScalarType::BFloat16;
}

inline bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat ||
         t == ScalarType::ComplexDouble;
}

inline bool isIntegralType(ScalarType t, bool include_bool) {
  return t == ScalarType::Byte || t == ScalarType::Char ||
         t == ScalarType::Short || t == ScalarType::Int ||
         t == ScalarType::Long || (include_bool && t == ScalarType::Bool);
}

inline bool isRealType(ScalarType t) {
  return isIntegralType(t, false) || t == ScalarType::Float ||
         t == ScalarType::Double;
}

// PyTorch's promote_types for the dtypes above: bool < integers < floats;
// within a kind the wider type wins; uint8 with a signed 8-bit type gives
// int16, and half with bfloat16 gives float.
inline ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) {
    return a;
  }
  if (a == ScalarType::Bool) {
    return b;
  }
  if (b == ScalarType::Bool) {
    return a;
  }
  const bool a_float = isFloatingType(a);
  const bool b_float = isFloatingType(b);
  if (a_float != b_float) {
    return a_float ? a : b;
  }
  const size_t a_size = ::executorch::runtime::etensor::elementSize(a);
  const size_t b_size = ::executorch::runtime::etensor::elementSize(b);
  if (a_float) {
    if (a_size == 2 && b_size == 2) {
      return ScalarType::Float; // Half with BFloat16
    }
    return a_size > b_size ? a : b;
  }
  if (a_size == b_size) {
    return ScalarType::Short; // Byte with Char
  }
  const ScalarType wider = a_size > b_size ? a : b;
  return wider == ScalarType::Byte ? ScalarType::Short : wider;
}

} // namespace runtime
} // namespace executorch

// ET_SWITCH_<SET>_TYPES(TYPE, CONTEXT, NAME, CTYPE_ALIAS, lambda) runs
// `lambda` with CTYPE_ALIAS bound to the C++ type of TYPE when TYPE is in
// SET. Otherwise it logs NAME and the dtype and fails CONTEXT with
// InvalidArgument. CONTEXT is a KernelRuntimeContext.
//
// A dtype-selective kernel library (codegen's DTYPE_SELECTIVE_BUILD) is
// compiled with EXECUTORCH_DTYPE_SELECTIVE_BUILD and a generated
// et_selected_dtypes.h; branches for dtypes it does not select are compiled
// out and fail like an unsupported dtype, saying why.
#ifdef EXECUTORCH_DTYPE_SELECTIVE_BUILD
#include <et_selected_dtypes.h>
#define ET_INTERNAL_DTYPE_SELECTED(T) \
  (::executorch::codegen::dtype_is_selected(T))
#else
#define ET_INTERNAL_DTYPE_SELECTED(T) true
#endif

#define ET_INTERNAL_SWITCH_CASE(NAME_, CTYPE_ALIAS, ...)                       \
  case ::executorch::aten::ScalarType::NAME_: {                                \
    if constexpr (ET_INTERNAL_DTYPE_SELECTED(                                  \
                      ::executorch::aten::ScalarType::NAME_)) {                \
      using CTYPE_ALIAS = typename ::executorch::runtime::ScalarTypeToCppType< \
          ::executorch::aten::ScalarType::NAME_>::type;                        \
      (void)sizeof(CTYPE_ALIAS);                                               \
      (__VA_ARGS__)();                                                         \
      et_switch_handled_ = true;                                               \
    }                                                                          \
    break;                                                                     \
  }

#define ET_INTERNAL_SWITCH(TYPE, CONTEXT, NAME, CASES)                        \
  do {                                                                        \
    const ::executorch::aten::ScalarType et_switch_type_ = (TYPE);            \
    bool et_switch_handled_ = false;                                          \
    switch (et_switch_type_) {                                                \
      CASES                                                                   \
      default:                                                                \
        break;                                                                \
    }                                                                         \
    if (!et_switch_handled_) {                                                \
      ET_LOG(Error,                                                           \
             "%s: unsupported dtype %s%s",                                    \
             (NAME),                                                          \
             ::executorch::runtime::toString(et_switch_type_),                \
             ET_INTERNAL_DTYPE_SELECTED(et_switch_type_)                      \
                 ? ""                                                         \
                 : " (compiled out of this dtype-selective build; add it to " \
                   "the operator's et_kernel_metadata)");                     \
      (CONTEXT).fail(::executorch::runtime::Error::InvalidArgument);          \
    }                                                                         \
  } while (0)

#define ET_INTERNAL_CASES_INT(A, ...)            \
  ET_INTERNAL_SWITCH_CASE(Byte, A, __VA_ARGS__)  \
  ET_INTERNAL_SWITCH_CASE(Char, A, __VA_ARGS__)  \
  ET_INTERNAL_SWITCH_CASE(Short, A, __VA_ARGS__) \
  ET_INTERNAL_SWITCH_CASE(Int, A, __VA_ARGS__)   \
  ET_INTERNAL_SWITCH_CASE(Long, A, __VA_ARGS__)
#define ET_INTERNAL_CASES_FLOAT(A, ...)          \
  ET_INTERNAL_SWITCH_CASE(Float, A, __VA_ARGS__) \
  ET_INTERNAL_SWITCH_CASE(Double, A, __VA_ARGS__)
#define ET_INTERNAL_CASES_HBF16(A, ...)         \
  ET_INTERNAL_SWITCH_CASE(Half, A, __VA_ARGS__) \
  ET_INTERNAL_SWITCH_CASE(BFloat16, A, __VA_ARGS__)
#define ET_INTERNAL_CASES_BOOL(A, ...) \
  ET_INTERNAL_SWITCH_CASE(Bool, A, __VA_ARGS__)

#define ET_SWITCH_INT_TYPES(TYPE, CONTEXT, NAME, A, ...) \
  ET_INTERNAL_SWITCH(TYPE, CONTEXT, NAME, ET_INTERNAL_CASES_INT(A, __VA_ARGS__))
#define ET_SWITCH_FLOAT_TYPES(TYPE, CONTEXT, NAME, A, ...) \
  ET_INTERNAL_SWITCH(                                      \
      TYPE, CONTEXT, NAME, ET_INTERNAL_CASES_FLOAT(A, __VA_ARGS__))
#define ET_SWITCH_FLOATHBF16_TYPES(TYPE, CONTEXT, NAME, A, ...) \
  ET_INTERNAL_SWITCH(TYPE,                                      \
                     CONTEXT,                                   \
                     NAME,                                      \
                     ET_INTERNAL_CASES_FLOAT(A, __VA_ARGS__)    \
                         ET_INTERNAL_CASES_HBF16(A, __VA_ARGS__))
#define ET_SWITCH_REAL_TYPES(TYPE, CONTEXT, NAME, A, ...)  \
  ET_INTERNAL_SWITCH(TYPE,                                 \
                     CONTEXT,                              \
                     NAME,                                 \
                     ET_INTERNAL_CASES_INT(A, __VA_ARGS__) \
                         ET_INTERNAL_CASES_FLOAT(A, __VA_ARGS__))
#define ET_SWITCH_REALB_TYPES(TYPE, CONTEXT, NAME, A, ...)       \
  ET_INTERNAL_SWITCH(TYPE,                                       \
                     CONTEXT,                                    \
                     NAME,                                       \
                     ET_INTERNAL_CASES_INT(A, __VA_ARGS__)       \
                         ET_INTERNAL_CASES_FLOAT(A, __VA_ARGS__) \
                             ET_INTERNAL_CASES_BOOL(A, __VA_ARGS__))
#define ET_SWITCH_REALHBF16_TYPES(TYPE, CONTEXT, NAME, A, ...)   \
  ET_INTERNAL_SWITCH(TYPE,                                       \
                     CONTEXT,                                    \
                     NAME,                                       \
                     ET_INTERNAL_CASES_INT(A, __VA_ARGS__)       \
                         ET_INTERNAL_CASES_FLOAT(A, __VA_ARGS__) \
                             ET_INTERNAL_CASES_HBF16(A, __VA_ARGS__))
#define ET_SWITCH_REALHBBF16_TYPES(TYPE, CONTEXT, NAME, A, ...)      \
  ET_INTERNAL_SWITCH(TYPE,                                           \
                     CONTEXT,                                        \
                     NAME,                                           \
                     ET_INTERNAL_CASES_INT(A, __VA_ARGS__)           \
                         ET_INTERNAL_CASES_FLOAT(A, __VA_ARGS__)     \
                             ET_INTERNAL_CASES_HBF16(A, __VA_ARGS__) \
                                 ET_INTERNAL_CASES_BOOL(A, __VA_ARGS__))
