#pragma once

// EXECUTORCH_LIBRARY: registers a plain C++ function as the kernel of an
// operator, without codegen or YAML (upstream ExecuTorch's name and use):
//
//   Tensor& scaled_tanh_out(KernelRuntimeContext& context,
//                           const Tensor& input, double scale, Tensor& out);
//   EXECUTORCH_LIBRARY(my_ops, "scaled_tanh.out", scaled_tanh_out);
//
// registers "my_ops::scaled_tanh.out" during static initialization. The
// function's parameters are the operator schema's arguments, out arguments
// included, in schema order; a first KernelRuntimeContext& parameter is
// optional. Its return value is not used (an out variant returns its out
// argument, which the caller already has).
//
// The boxed kernel made here converts the call's EValues to the parameter
// types. It checks every value first: a call with fewer values than
// parameters, or a value of another type (a program whose operator schema
// differs from the function's), fails with Error::InvalidArgument and a log
// line naming the operator, the argument and both types; it never aborts.
//
// Parameter types, by value or by const reference: Tensor (also Tensor&),
// int64_t, double (an Int value converts), bool, Scalar, ScalarType,
// std::string_view, ArrayRef of int64_t, double, bool, Tensor or
// std::optional<Tensor>, and std::optional of any of these (None gives
// std::nullopt). Another type does not compile.
//
// Linking: registration runs in a static initializer of the object file
// that uses the macro, so that object must be part of the program. A
// static library's object that nothing references is dropped by the
// linker: compile the file into the executable, or link its library whole
// (-Wl,--whole-archive). A second registration of the same operator fails
// (the registry logs it); the first one stays.
//
// Lower level, as upstream spells it:
//   Kernel kernel = make_boxed_kernel("my_ops::scaled_tanh.out",
//                                     EXECUTORCH_FN(scaled_tanh_out));
// then register_kernels() at start-up (EXECUTORCH_FN(fn, name) names the
// function in logs; name must be a constant char array).
//
// Threads: registration is not thread-safe (operator_registry.h). Tests:
// extension/kernel_util/make_boxed_from_unboxed_functor_test.cpp, and
// examples/custom_ops' custom_ops_library_runner
// (test/selective/test_custom_op.py).

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {
namespace kernel_util_internal {

using ::executorch::aten::ArrayRef;
using ::executorch::aten::Scalar;
using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::EValue;

// How an EValue becomes a parameter of type T: matches() says whether it
// can, get() converts, none_or and kind name T in error messages.
template <typename T>
struct Arg {
  static_assert(sizeof(T) == 0,
                "EXECUTORCH_LIBRARY: unsupported kernel parameter type (see "
                "make_boxed_from_unboxed_functor.h for the supported ones)");
};

#define ET_KERNEL_UTIL_ARG(T, KIND, IS, GET)   \
  template <>                                  \
  struct Arg<T> {                              \
    static constexpr const char* none_or = ""; \
    static constexpr const char* kind = KIND;  \
    static bool matches(const EValue& v) {     \
      return IS;                               \
    }                                          \
    static decltype(auto) get(EValue& v) {     \
      return GET;                              \
    }                                          \
  };
ET_KERNEL_UTIL_ARG(Tensor, "Tensor", v.isTensor(), v.toTensor())
ET_KERNEL_UTIL_ARG(int64_t, "Int", v.isInt(), v.toInt())
ET_KERNEL_UTIL_ARG(double,
                   "Double",
                   v.isDouble() || v.isInt(),
                   v.isInt() ? static_cast<double>(v.toInt()) : v.toDouble())
ET_KERNEL_UTIL_ARG(bool, "Bool", v.isBool(), v.toBool())
ET_KERNEL_UTIL_ARG(Scalar, "Scalar", v.isScalar(), v.toScalar())
ET_KERNEL_UTIL_ARG(ScalarType,
                   "ScalarType (Int)",
                   v.isInt(),
                   static_cast<ScalarType>(v.toInt()))
ET_KERNEL_UTIL_ARG(std::string_view, "String", v.isString(), v.toString())
ET_KERNEL_UTIL_ARG(ArrayRef<int64_t>, "ListInt", v.isIntList(), v.toIntList())
ET_KERNEL_UTIL_ARG(ArrayRef<double>,
                   "ListDouble",
                   v.isDoubleList(),
                   v.toDoubleList())
ET_KERNEL_UTIL_ARG(ArrayRef<bool>, "ListBool", v.isBoolList(), v.toBoolList())
ET_KERNEL_UTIL_ARG(ArrayRef<Tensor>,
                   "ListTensor",
                   v.isTensorList(),
                   v.toTensorList())
ET_KERNEL_UTIL_ARG(ArrayRef<std::optional<Tensor>>,
                   "ListOptionalTensor",
                   v.isListOptionalTensor(),
                   v.toListOptionalTensor())
#undef ET_KERNEL_UTIL_ARG

template <typename T>
struct Arg<std::optional<T>> {
  static constexpr const char* none_or = "None or ";
  static constexpr const char* kind = Arg<T>::kind;
  static bool matches(const EValue& v) {
    return v.isNone() || Arg<T>::matches(v);
  }
  static std::optional<T> get(EValue& v) {
    if (v.isNone()) {
      return std::nullopt;
    }
    return std::optional<T>(Arg<T>::get(v));
  }
};

// The Arg of a parameter declared as P (const T&, T& or T).
template <typename P>
using ArgOf = Arg<std::remove_cv_t<std::remove_reference_t<P>>>;

// Whether stack[index] converts to parameter `index` (of type P); if not,
// logs why and fails the call.
template <typename P>
bool check_argument(::executorch::runtime::KernelRuntimeContext& context,
                    const char* name,
                    ::executorch::runtime::Span<EValue*> stack,
                    size_t index) {
  if (stack[index] != nullptr && ArgOf<P>::matches(*stack[index])) {
    return true;
  }
  ET_LOG(Error,
         "%s: argument %zu is %s, the kernel's parameter takes %s%s",
         name,
         index,
         stack[index] == nullptr
             ? "missing"
             : ::executorch::runtime::tag_to_string(stack[index]->tag),
         ArgOf<P>::none_or,
         ArgOf<P>::kind);
  context.fail(::executorch::runtime::Error::InvalidArgument);
  return false;
}

template <typename... P>
bool check_stack(::executorch::runtime::KernelRuntimeContext& context,
                 const char* name,
                 ::executorch::runtime::Span<EValue*> stack) {
  if (stack.size() < sizeof...(P)) {
    ET_LOG(Error,
           "%s: called with %zu values, the kernel takes %zu arguments",
           name,
           stack.size(),
           sizeof...(P));
    context.fail(::executorch::runtime::Error::InvalidArgument);
    return false;
  }
  size_t index = 0;
  bool ok = true;
  ((ok = ok && check_argument<P>(context, name, stack, index++)), ...);
  return ok;
}

// A function known at compile time (EXECUTORCH_FN), with a name for logs.
template <typename Function, Function* function, const char* name>
struct FunctionTag final {
  static_assert(std::is_function<Function>::value,
                "EXECUTORCH_FN takes a function");
  using FuncType = Function;
  static constexpr const char* func_name_ = name;
  static constexpr Function* func_ptr() {
    return function;
  }
};

inline constexpr char kUnnamedKernel[] = "EXECUTORCH_FN kernel";

template <typename... P>
struct ParameterList {};

template <typename Function>
struct ParametersOf;
template <typename Return, typename... P>
struct ParametersOf<Return(P...)> {
  using type = ParameterList<P...>;
};

// Checks the stack against parameters P (the context excluded), then calls
// the function, passing the context first when it takes one.
template <typename Tag, bool kTakesContext, typename... P>
struct UnboxedCall {
  template <size_t... I>
  static void call(::executorch::runtime::KernelRuntimeContext& context,
                   ::executorch::runtime::Span<EValue*> stack,
                   std::index_sequence<I...>) {
    if constexpr (kTakesContext) {
      (*Tag::func_ptr())(context, ArgOf<P>::get(*stack[I])...);
    } else {
      (*Tag::func_ptr())(ArgOf<P>::get(*stack[I])...);
    }
  }
  static void call(::executorch::runtime::KernelRuntimeContext& context,
                   ::executorch::runtime::Span<EValue*> stack) {
    if (check_stack<P...>(context, Tag::func_name_, stack)) {
      call(context, stack, std::index_sequence_for<P...>());
    }
  }
};

template <typename Tag, typename List>
struct Unboxed;
template <typename Tag, typename... P>
struct Unboxed<Tag, ParameterList<P...>> : UnboxedCall<Tag, false, P...> {};
template <typename Tag, typename... P>
struct Unboxed<
    Tag,
    ParameterList<::executorch::runtime::KernelRuntimeContext&, P...>>
    : UnboxedCall<Tag, true, P...> {};

} // namespace kernel_util_internal

// The boxed form (runtime::OpFunction) of the function that FunctionTag
// (EXECUTORCH_FN) names.
template <typename FunctionTag>
struct WrapUnboxedIntoFunctor {
  static void call(
      ::executorch::runtime::KernelRuntimeContext& context,
      ::executorch::runtime::Span<::executorch::runtime::EValue*> stack) {
    kernel_util_internal::Unboxed<
        FunctionTag,
        typename kernel_util_internal::ParametersOf<
            typename FunctionTag::FuncType>::type>::call(context, stack);
  }
};

// A Kernel named `name` (static storage: the registry keeps the pointer)
// running the function that `function` (EXECUTORCH_FN) names.
template <typename FunctionTag>
::executorch::runtime::Kernel make_boxed_kernel(const char* name,
                                                FunctionTag /*function*/) {
  return ::executorch::runtime::Kernel(
      name, WrapUnboxedIntoFunctor<FunctionTag>::call);
}

} // namespace extension
} // namespace executorch

#define ET_KERNEL_UTIL_FN_TAG(func, name)                             \
  ::executorch::extension::kernel_util_internal::FunctionTag<         \
      std::remove_pointer_t<std::remove_reference_t<decltype(func)>>, \
      func,                                                           \
      name>()
#define ET_KERNEL_UTIL_FN_1(func) \
  ET_KERNEL_UTIL_FN_TAG(          \
      func, ::executorch::extension::kernel_util_internal::kUnnamedKernel)
#define ET_KERNEL_UTIL_FN_2(func, name) ET_KERNEL_UTIL_FN_TAG(func, name)
#define ET_KERNEL_UTIL_PICK(_1, _2, chosen, ...) chosen
// EXECUTORCH_FN(function) or EXECUTORCH_FN(function, name).
#define EXECUTORCH_FN(...)                                                   \
  ET_KERNEL_UTIL_PICK(__VA_ARGS__, ET_KERNEL_UTIL_FN_2, ET_KERNEL_UTIL_FN_1) \
  (__VA_ARGS__)

#define EXECUTORCH_LIBRARY(ns, op_name, func) \
  ET_KERNEL_UTIL_LIBRARY(ns, op_name, func, __LINE__)
#define ET_KERNEL_UTIL_LIBRARY(ns, op_name, func, line) \
  ET_KERNEL_UTIL_LIBRARY_AT(ns, op_name, func, line)
#define ET_KERNEL_UTIL_LIBRARY_AT(ns, op_name, func, line)                 \
  static constexpr char et_kernel_name_##ns##_##line[] = #ns "::" op_name; \
  static const ::executorch::runtime::Error                                \
      et_kernel_registered_##ns##_##line =                                 \
          ::executorch::runtime::register_kernel(                          \
              ::executorch::extension::make_boxed_kernel(                  \
                  et_kernel_name_##ns##_##line,                            \
                  EXECUTORCH_FN(func, et_kernel_name_##ns##_##line)))

// Upstream's deprecated spelling, still used by older kernels.
namespace torch {
namespace executor {
using ::executorch::extension::make_boxed_kernel;
using ::executorch::extension::WrapUnboxedIntoFunctor;
} // namespace executor
} // namespace torch
