#pragma once

// Argument checks shared by the portable kernels. Each check logs the
// operator and the argument that failed and fails the kernel's context, so
// a kernel can write `if (!check_...(...)) return out;`.

#include <cstdint>
#include <initializer_list>
#include <limits>

#include <executorch/runtime/kernel/kernel_includes.h>

namespace torch {
namespace executor {
namespace native {

using ::executorch::aten::ArrayRef;
using ::executorch::aten::IntArrayRef;
using ::executorch::aten::Scalar;
using ::executorch::aten::ScalarType;
using ::executorch::aten::SizesType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::Error;
using ::executorch::runtime::KernelRuntimeContext;

// Largest rank the helpers handle (the runtime's limit as well).
constexpr size_t kMaxDims = 16;

// Fixed-capacity shape used while computing output sizes (no heap).
struct Shape {
  SizesType sizes[kMaxDims];
  size_t ndim = 0;

  ArrayRef<SizesType> ref() const {
    return ArrayRef<SizesType>(sizes, ndim);
  }
  int64_t numel() const;
  // A size that does not fit SizesType (from a hostile program's
  // arguments) is stored as -1, which every resize refuses, instead of
  // being truncated into a plausible size.
  void push_back(int64_t size) {
    sizes[ndim++] = size < 0 || size > std::numeric_limits<SizesType>::max()
                        ? SizesType(-1)
                        : static_cast<SizesType>(size);
  }
};

// Formats sizes as "[2, 3]" into a caller buffer, for log messages.
const char* format_sizes(ArrayRef<SizesType> sizes, char* buffer, size_t size);

// Fails `context` with InvalidArgument after logging "<op>: <message>".
void fail_arg(KernelRuntimeContext& context,
              const char* op,
              const char* format,
              ...) __attribute__((format(printf, 3, 4)));

// Resizes `out` to `sizes`; on failure names the operator, the argument
// and both shapes.
bool resize_out(KernelRuntimeContext& context,
                const char* op,
                const char* arg_name,
                const Tensor& out,
                ArrayRef<SizesType> sizes);

// Resizes `out` to the shape of `like`.
inline bool resize_like(KernelRuntimeContext& context,
                        const char* op,
                        const Tensor& out,
                        const Tensor& like) {
  return resize_out(context, op, "out", out, like.sizes());
}

// Turns a possibly negative `dim` into an index into a rank-`rank` tensor.
// A 0-dim tensor accepts dims -1 and 0, like PyTorch.
bool normalize_dim(KernelRuntimeContext& context,
                   const char* op,
                   int64_t dim,
                   int64_t rank,
                   int64_t* result);

bool check_dtype(KernelRuntimeContext& context,
                 const char* op,
                 const char* arg_name,
                 const Tensor& t,
                 ScalarType expected);

bool check_same_dtype(KernelRuntimeContext& context,
                      const char* op,
                      const char* arg_name,
                      const Tensor& t,
                      const Tensor& reference);

bool check_rank(KernelRuntimeContext& context,
                const char* op,
                const char* arg_name,
                const Tensor& t,
                std::initializer_list<int64_t> allowed_ranks);

// Kernels that index memory directly require the default (contiguous) dim
// order for these tensors.
bool check_default_dim_order(KernelRuntimeContext& context,
                             const char* op,
                             std::initializer_list<const Tensor*> tensors);

// PyTorch's can_cast: no floating to integral, no non-bool to bool.
bool can_cast(ScalarType from, ScalarType to);

// Checks that a result computed in `from` may be written to `out`.
bool check_can_cast(KernelRuntimeContext& context,
                    const char* op,
                    ScalarType from,
                    const Tensor& out);

// The type elementwise arithmetic runs in: 16-bit floats compute in float.
inline ScalarType compute_type(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 ? ScalarType::Float
                                                            : t;
}

// Result type of a tensor of type `t` combined with scalar `s`, as PyTorch
// promotes a wrapped number: it only changes the category.
ScalarType promote_with_scalar(ScalarType t, const Scalar& s);

// True for the types the runtime can compute with.
bool is_supported_dtype(ScalarType t);

} // namespace native
} // namespace executor
} // namespace torch
