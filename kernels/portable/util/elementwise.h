#pragma once

// The elementwise engine every pointwise, broadcasting and copying kernel
// runs on. An Operand describes how an input is read at each position of
// the output's index space (data pointer, dtype, and a stride per output
// dim: 0 where it broadcasts). apply_elementwise<CTYPE>() walks that space
// with the innermost dimension as a strided loop; outer dimensions advance
// by counters, never by recomputing offsets per element. Inputs whose dtype
// is not CTYPE, and outputs whose dtype is not the functor's result type,
// are converted a block at a time, so the switch on dtype runs once per
// block rather than per element.

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include <executorch/kernels/portable/util/checks.h>
#include <executorch/runtime/core/portable_type/float_to_integer.h>

namespace torch {
namespace executor {
namespace native {

struct Operand {
  const char* data = nullptr;
  ScalarType dtype = ScalarType::Float;
  int64_t strides[kMaxDims] = {};
};

struct OutOperand {
  char* data = nullptr;
  ScalarType dtype = ScalarType::Float;
  int64_t strides[kMaxDims] = {};
};

// Strides (in elements) of `t` in its dim order.
void tensor_strides(const Tensor& t, int64_t* strides);

// Reads `t` broadcast to `out_sizes` (right-aligned, size-1 dims repeat).
Operand broadcast_operand(const Tensor& t, ArrayRef<SizesType> out_sizes);

// Writes `t` in its own layout.
OutOperand out_operand(const Tensor& t);

// A value read at every position.
template <typename T>
Operand scalar_operand(const T& value) {
  Operand op;
  op.data = reinterpret_cast<const char*>(&value);
  op.dtype = ::executorch::runtime::CppTypeToScalarType<T>::value;
  return op;
}

// Computes the output shape of broadcasting `inputs` together; false (and
// the context failed, naming `op`) when they do not broadcast.
bool broadcast_shape(KernelRuntimeContext& context,
                     const char* op,
                     std::initializer_list<const Tensor*> inputs,
                     Shape* shape);

// broadcast_shape() then resizes `out` to it.
bool resize_to_broadcast(KernelRuntimeContext& context,
                         const char* op,
                         std::initializer_list<const Tensor*> inputs,
                         const Tensor& out);

// PyTorch's result type of a binary operation: a 0-dim tensor only decides
// the type when its category (bool < integral < floating) is higher.
ScalarType result_type(const Tensor& a, const Tensor& b);

// For a tensor-tensor operation writing `out`: computes the result type
// into `*common`, checks `out` can hold it and resizes `out` to the
// broadcast shape.
bool prepare_binary(KernelRuntimeContext& context,
                    const char* op,
                    const Tensor& a,
                    const Tensor& b,
                    const Tensor& out,
                    ScalarType* common);

// The same for a tensor-scalar operation; `out` takes `a`'s shape.
bool prepare_binary_scalar(KernelRuntimeContext& context,
                           const char* op,
                           const Tensor& a,
                           const Scalar& b,
                           const Tensor& out,
                           ScalarType* common);

namespace internal {

template <typename T>
constexpr bool is_16bit_float =
    std::is_same<T, ::executorch::aten::Half>::value ||
    std::is_same<T, ::executorch::aten::BFloat16>::value;

using ::executorch::runtime::etensor::float_to_integer;

// static_cast that goes through float for Half and BFloat16, which only
// convert to and from float, and is defined for every floating value
// converted to an integer (float_to_integer).
template <typename To, typename From>
inline To convert(From value) {
  if constexpr (is_16bit_float<From>) {
    return convert<To>(static_cast<float>(value));
  } else if constexpr (is_16bit_float<To>) {
    return static_cast<To>(static_cast<float>(value));
  } else if constexpr (std::is_floating_point<From>::value &&
                       std::is_integral<To>::value &&
                       !std::is_same<To, bool>::value) {
    return float_to_integer<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

// One element of a tensor's memory. A bool is read as its byte: a bool
// tensor may hold any byte (a crafted constant, planned memory that another
// dtype wrote), and loading one other than 0 or 1 as bool is undefined; any
// nonzero byte is true.
template <typename C>
inline C read_element(const C* p) {
  return *p;
}
inline bool read_element(const bool* p) {
  return *reinterpret_cast<const uint8_t*>(p) != 0;
}

// Converts `n` elements read with `stride` from `src` (of dtype `type`)
// into `dst`.
template <typename T>
void load_block(
    const char* src, ScalarType type, int64_t stride, int64_t n, T* dst) {
  switch (type) {
#define ET_LOAD_CASE(ctype, name)                         \
  case ScalarType::name: {                                \
    const ctype* s = reinterpret_cast<const ctype*>(src); \
    for (int64_t i = 0; i < n; ++i) {                     \
      dst[i] = convert<T>(read_element(s + i * stride));  \
    }                                                     \
    break;                                                \
  }
    ET_FORALL_SCALAR_TYPES(ET_LOAD_CASE)
#undef ET_LOAD_CASE
    default:
      break;
  }
}

// Converts `n` elements of `src` into `dst` (of dtype `type`), written with
// `stride`.
template <typename T>
void store_block(
    const T* src, char* dst, ScalarType type, int64_t stride, int64_t n) {
  switch (type) {
#define ET_STORE_CASE(ctype, name)            \
  case ScalarType::name: {                    \
    ctype* d = reinterpret_cast<ctype*>(dst); \
    for (int64_t i = 0; i < n; ++i) {         \
      d[i * stride] = convert<ctype>(src[i]); \
    }                                         \
    break;                                    \
  }
    ET_FORALL_SCALAR_TYPES(ET_STORE_CASE)
#undef ET_STORE_CASE
    default:
      break;
  }
}

// Merges adjacent dims that every operand walks contiguously and drops
// size-1 dims, so a dense operation becomes one long inner loop. Rewrites
// `sizes` and each of `strides[0..num_strides)` in place; returns the new
// rank.
size_t coalesce(int64_t* sizes,
                size_t ndim,
                int64_t* const* strides,
                size_t num_strides);

template <typename T>
constexpr ScalarType scalar_type_of =
    ::executorch::runtime::CppTypeToScalarType<T>::value;

constexpr int64_t kBlock = 64;

template <typename CTYPE, typename RTYPE, size_t N, typename Fn, size_t... I>
void run_elementwise(ArrayRef<SizesType> shape,
                     const OutOperand& out,
                     const Operand (&inputs)[N],
                     Fn& fn,
                     std::index_sequence<I...>) {
  int64_t sizes[kMaxDims];
  int64_t strides[N + 1][kMaxDims];
  int64_t* stride_ptrs[N + 1];
  const size_t rank = shape.size();
  for (size_t d = 0; d < rank; ++d) {
    sizes[d] = shape[d];
    if (sizes[d] == 0) {
      return;
    }
    strides[N][d] = out.strides[d];
    ((strides[I][d] = inputs[I].strides[d]), ...);
  }
  for (size_t k = 0; k <= N; ++k) {
    stride_ptrs[k] = strides[k];
  }
  const size_t ndim = coalesce(sizes, rank, stride_ptrs, N + 1);

  const size_t in_size[N] = {
      ::executorch::runtime::etensor::elementSize(inputs[I].dtype)...};
  const size_t out_size =
      ::executorch::runtime::etensor::elementSize(out.dtype);
  const bool direct = out.dtype == scalar_type_of<RTYPE> &&
                      ((inputs[I].dtype == scalar_type_of<CTYPE>)&&...);
  const int64_t inner = ndim == 0 ? 1 : sizes[ndim - 1];
  const int64_t in_step[N] = {ndim == 0 ? 0 : strides[I][ndim - 1]...};
  const int64_t out_step = ndim == 0 ? 0 : strides[N][ndim - 1];

  // Offsets in bytes of the current inner run, advanced by an odometer over
  // the outer dims.
  int64_t counter[kMaxDims] = {};
  int64_t in_offset[N] = {};
  int64_t out_offset = 0;
  while (true) {
    const char* in_ptr[N] = {inputs[I].data + in_offset[I]...};
    char* out_ptr = out.data + out_offset;
    if (direct) {
      const CTYPE* in_typed[N] = {reinterpret_cast<const CTYPE*>(in_ptr[I])...};
      RTYPE* out_typed = reinterpret_cast<RTYPE*>(out_ptr);
      for (int64_t i = 0; i < inner; ++i) {
        out_typed[i * out_step] = static_cast<RTYPE>(
            fn(read_element(&in_typed[I][i * in_step[I]])...));
      }
    } else {
      CTYPE block[N][kBlock];
      RTYPE result[kBlock];
      for (int64_t start = 0; start < inner; start += kBlock) {
        const int64_t n = inner - start < kBlock ? inner - start : kBlock;
        (load_block<CTYPE>(in_ptr[I] + start * in_step[I] * in_size[I],
                           inputs[I].dtype,
                           in_step[I],
                           n,
                           block[I]),
         ...);
        for (int64_t j = 0; j < n; ++j) {
          result[j] = static_cast<RTYPE>(fn(block[I][j]...));
        }
        store_block<RTYPE>(result,
                           out_ptr + start * out_step * out_size,
                           out.dtype,
                           out_step,
                           n);
      }
    }
    // Advance the odometer over the outer dims [0, ndim - 1).
    int64_t d = static_cast<int64_t>(ndim) - 2;
    for (; d >= 0; --d) {
      ((in_offset[I] += strides[I][d] * in_size[I]), ...);
      out_offset += strides[N][d] * out_size;
      if (++counter[d] < sizes[d]) {
        break;
      }
      ((in_offset[I] -= strides[I][d] * in_size[I] * sizes[d]), ...);
      out_offset -= strides[N][d] * out_size * sizes[d];
      counter[d] = 0;
    }
    if (d < 0) {
      return;
    }
  }
}

} // namespace internal

// Calls `fn` with N CTYPE values for every position of the index space
// `shape` and stores the result, as RTYPE, into `out`. Inputs of other
// dtypes are converted to CTYPE first, and RTYPE to out's dtype after.
template <typename CTYPE, typename RTYPE = CTYPE, size_t N, typename Fn>
void apply_elementwise(ArrayRef<SizesType> shape,
                       const OutOperand& out,
                       const Operand (&inputs)[N],
                       Fn fn) {
  internal::run_elementwise<CTYPE, RTYPE>(
      shape, out, inputs, fn, std::make_index_sequence<N>());
}

// The common case: `fn` over tensors broadcast to `out`, which already has
// the broadcast shape.
template <typename CTYPE, typename RTYPE = CTYPE, typename Fn, typename... Ts>
void map_broadcast(const Tensor& out, Fn fn, const Ts&... tensors) {
  const Operand inputs[] = {broadcast_operand(tensors, out.sizes())...};
  apply_elementwise<CTYPE, RTYPE>(out.sizes(), out_operand(out), inputs, fn);
}

} // namespace native
} // namespace executor
} // namespace torch
