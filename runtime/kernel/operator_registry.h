#pragma once

// The kernel registry. Generated registration code (see codegen/) and
// hand-written libraries add Kernels with register_kernels(); a Method looks
// each of its operators up by "namespace::name.overload" and, when kernels
// are specialized, by the dtypes and dim orders of its tensor arguments.
//
// Storage is a fixed-size static table (no heap). Registration is not
// thread-safe: do it before loading methods, typically from static
// initializers or an explicit call at start-up.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/span.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>

#ifndef ET_MAX_REGISTERED_KERNELS
#define ET_MAX_REGISTERED_KERNELS 2000
#endif

namespace executorch {
namespace runtime {

// A boxed kernel: arguments arrive as EValues in the order of the operator's
// schema (out arguments included), followed by its return values.
using OpFunction = void (*)(KernelRuntimeContext&, Span<EValue*>);

// dtype and dim order of one tensor argument, for specialized lookup.
struct TensorMeta {
  ::executorch::aten::ScalarType dtype_ = ::executorch::aten::ScalarType::Float;
  Span<const ::executorch::aten::DimOrderType> dim_order_;

  TensorMeta() = default;
  TensorMeta(::executorch::aten::ScalarType dtype,
             Span<const ::executorch::aten::DimOrderType> dim_order)
      : dtype_(dtype), dim_order_(dim_order) {}
};

// Identifies one specialization of an operator. The string form is
// "v1/" then, per tensor argument, "<dtype>;<dim,order,...>", joined by "|",
// e.g. "v1/6;0,1|6;0,1". An empty key is the fallback kernel that accepts
// any dtypes.
struct KernelKey {
  constexpr KernelKey() : data_(nullptr) {}
  /* implicit */ constexpr KernelKey(const char* data) : data_(data) {}

  bool is_fallback() const {
    return data_ == nullptr || data_[0] == '\0';
  }
  const char* data() const {
    return data_;
  }
  bool operator==(const KernelKey& other) const {
    if (is_fallback() || other.is_fallback()) {
      return is_fallback() && other.is_fallback();
    }
    return std::strcmp(data_, other.data_) == 0;
  }

 private:
  const char* data_;
};

struct Kernel {
  const char* name_;
  KernelKey kernel_key_;
  OpFunction op_;

  constexpr Kernel() : name_(nullptr), kernel_key_(), op_(nullptr) {}
  constexpr explicit Kernel(const char* name, OpFunction func)
      : name_(name), kernel_key_(), op_(func) {}
  constexpr explicit Kernel(const char* name, KernelKey key, OpFunction func)
      : name_(name), kernel_key_(key), op_(func) {}
};

// Adds kernels to the registry. Fails with RegistrationAlreadyRegistered for
// a duplicate (name, key) and RegistrationExceedingMaxKernels when full; in
// both cases nothing from `kernels` is added.
ET_NODISCARD Error register_kernels(const Span<const Kernel> kernels);

ET_NODISCARD inline Error register_kernel(const Kernel& kernel) {
  return register_kernels(Span<const Kernel>(&kernel, 1));
}

// True if a kernel for `name` accepts arguments described by `meta_list`.
bool registry_has_op_function(const char* name,
                              Span<const TensorMeta> meta_list = {});

// The kernel for `name` matching `meta_list` exactly, else the fallback
// kernel for `name`; OperatorMissing if neither exists.
Result<OpFunction> get_op_function_from_registry(
    const char* name, Span<const TensorMeta> meta_list = {});

// Every registered kernel, in registration order.
Span<const Kernel> get_registered_kernels();

// Writes the KernelKey string for `meta_list` into `buffer` (NUL-terminated).
ET_NODISCARD Error make_kernel_key_string(Span<const TensorMeta> meta_list,
                                          char* buffer,
                                          size_t buffer_size);

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::get_op_function_from_registry;
using ::executorch::runtime::Kernel;
using ::executorch::runtime::KernelKey;
using ::executorch::runtime::OpFunction;
using ::executorch::runtime::register_kernels;
using ::executorch::runtime::registry_has_op_function;
using ::executorch::runtime::TensorMeta;
} // namespace executor
} // namespace torch
