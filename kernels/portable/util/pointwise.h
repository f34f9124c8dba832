#pragma once

// Skeletons for unary and binary pointwise kernels. A kernel supplies a
// "maker": a generic lambda that receives a value of the compute type and
// returns the element functor for that type, e.g.
//
//   [&](auto zero) {
//     using T = decltype(zero);
//     const T a = alpha.to<T>();
//     return [a](T x, T y) { return x + a * y; };
//   }
//
// The skeleton checks the arguments, picks the compute type, resizes `out`
// and runs the functor through the elementwise engine. Tensor-scalar
// variants reuse the tensor-tensor maker with the scalar as a broadcast
// operand.

#include <type_traits>

#include <executorch/kernels/portable/util/elementwise.h>

namespace torch {
namespace executor {
namespace native {

// What a pointwise operation produces.
enum class ResultKind {
  // The promoted input type (add, mul, neg, ...).
  kPromoted,
  // Bool, whatever the inputs (comparisons, logical ops).
  kBool,
  // A floating type: integral inputs compute in float (div, exp, ...).
  kFloating,
};

namespace internal {

// Chooses the compute type for `common` and checks `out` can hold the
// result; false (context failed) otherwise.
bool pointwise_types(KernelRuntimeContext& context,
                     const char* op,
                     ResultKind kind,
                     ScalarType common,
                     const Tensor& out,
                     ScalarType* compute);

template <ResultKind kKind, typename T>
using result_t = std::conditional_t<kKind == ResultKind::kBool, bool, T>;

// Runs the lambda with CTYPE bound to the compute type. 16-bit floats never
// get here (they compute in float); floating results only instantiate
// float and double.
#define ET_POINTWISE_SWITCH(KIND, TYPE, CONTEXT, NAME, CTYPE, ...)  \
  if constexpr (KIND == ResultKind::kFloating) {                    \
    ET_SWITCH_FLOAT_TYPES(TYPE, CONTEXT, NAME, CTYPE, __VA_ARGS__); \
  } else {                                                          \
    ET_SWITCH_REALB_TYPES(TYPE, CONTEXT, NAME, CTYPE, __VA_ARGS__); \
  }

} // namespace internal

template <ResultKind kKind = ResultKind::kPromoted, typename Maker>
Tensor& unary_out(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& in,
                  Tensor& out,
                  Maker make) {
  ScalarType compute;
  if (!internal::pointwise_types(
          ctx, op, kKind, in.scalar_type(), out, &compute) ||
      !resize_like(ctx, op, out, in)) {
    return out;
  }
  ET_POINTWISE_SWITCH(kKind, compute, ctx, op, CTYPE, [&] {
    map_broadcast<CTYPE, internal::result_t<kKind, CTYPE>>(
        out, make(CTYPE()), in);
  });
  return out;
}

template <ResultKind kKind = ResultKind::kPromoted, typename Maker>
Tensor& binary_out(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& a,
                   const Tensor& b,
                   Tensor& out,
                   Maker make) {
  ScalarType compute;
  if (!internal::pointwise_types(
          ctx, op, kKind, result_type(a, b), out, &compute) ||
      !resize_to_broadcast(ctx, op, {&a, &b}, out)) {
    return out;
  }
  ET_POINTWISE_SWITCH(kKind, compute, ctx, op, CTYPE, [&] {
    map_broadcast<CTYPE, internal::result_t<kKind, CTYPE>>(
        out, make(CTYPE()), a, b);
  });
  return out;
}

template <ResultKind kKind = ResultKind::kPromoted, typename Maker>
Tensor& binary_scalar_out(KernelRuntimeContext& ctx,
                          const char* op,
                          const Tensor& a,
                          const Scalar& b,
                          Tensor& out,
                          Maker make) {
  ScalarType compute;
  if (!internal::pointwise_types(ctx,
                                 op,
                                 kKind,
                                 promote_with_scalar(a.scalar_type(), b),
                                 out,
                                 &compute) ||
      !resize_like(ctx, op, out, a)) {
    return out;
  }
  ET_POINTWISE_SWITCH(kKind, compute, ctx, op, CTYPE, [&] {
    const CTYPE value = b.to<CTYPE>();
    const Operand inputs[] = {broadcast_operand(a, out.sizes()),
                              scalar_operand(value)};
    apply_elementwise<CTYPE, internal::result_t<kKind, CTYPE>>(
        out.sizes(), out_operand(out), inputs, make(CTYPE()));
  });
  return out;
}

// Fails with the operator named when `t` is bool; for operations PyTorch
// rejects on bool tensors (sub, neg).
bool check_not_bool(KernelRuntimeContext& context,
                    const char* op,
                    const char* arg_name,
                    ScalarType t);

} // namespace native
} // namespace executor
} // namespace torch
