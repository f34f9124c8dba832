// add, sub, mul, div on float32 as vectorized runs (float_runs.h): dense
// operands, a row or channel broadcast, a scalar tensor; mul and div by a
// Scalar (an attention's scaling) as the same runs against one value. Other
// dtypes and layouts go to the portable kernels.

#include <executorch/kernels/optimized/cpu/float_runs.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/elementwise.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::all_float;
using ::executorch::kernels::optimized::BinaryOp;
using ::executorch::kernels::optimized::FloatRun;
using ::executorch::kernels::optimized::for_each_float_run;
using ::executorch::kernels::optimized::kCheapGrain;
using ::executorch::kernels::optimized::simd;

// true when the float path wrote `out` or failed `ctx` with the reason;
// false when the portable kernel should run instead.
bool float_binary(KernelRuntimeContext& ctx,
                  const char* name,
                  BinaryOp op,
                  const Tensor& a,
                  const Tensor& b,
                  float alpha,
                  Tensor& out) {
  if (!all_float({&a, &b, &out})) {
    return false;
  }
  ScalarType common;
  if (!prepare_binary(ctx, name, a, b, out, &common)) {
    return true;
  }
  const auto& kernels = simd();
  return for_each_float_run(
      out, {&a, &b}, kCheapGrain, [&](const FloatRun& run) {
        kernels.binary(op,
                       run.in[0],
                       run.step[0],
                       run.in[1],
                       run.step[1],
                       run.out,
                       run.n,
                       alpha);
      });
}

// `a` op `b` for a float32 `a` and `out`: the portable kernel computes in
// float32 too, with `b` converted to it.
bool float_binary_scalar(KernelRuntimeContext& ctx,
                         const char* name,
                         BinaryOp op,
                         const Tensor& a,
                         const Scalar& b,
                         Tensor& out) {
  if (!all_float({&a, &out})) {
    return false;
  }
  if (!resize_like(ctx, name, out, a)) {
    return true;
  }
  const float value = b.to<float>();
  const auto& kernels = simd();
  return for_each_float_run(out, {&a}, kCheapGrain, [&](const FloatRun& run) {
    kernels.binary(op, run.in[0], run.step[0], &value, 0, run.out, run.n, 1.0f);
  });
}

} // namespace

Tensor& opt_add_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& other,
                    const Scalar& alpha,
                    Tensor& out) {
  if (!float_binary(ctx,
                    "add.out",
                    BinaryOp::kAdd,
                    self,
                    other,
                    alpha.to<float>(),
                    out)) {
    add_out(ctx, self, other, alpha, out);
  }
  return out;
}

Tensor& opt_sub_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& other,
                    const Scalar& alpha,
                    Tensor& out) {
  if (!float_binary(ctx,
                    "sub.out",
                    BinaryOp::kSub,
                    self,
                    other,
                    alpha.to<float>(),
                    out)) {
    sub_out(ctx, self, other, alpha, out);
  }
  return out;
}

Tensor& opt_mul_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& other,
                    Tensor& out) {
  if (!float_binary(ctx, "mul.out", BinaryOp::kMul, self, other, 1.0f, out)) {
    mul_out(ctx, self, other, out);
  }
  return out;
}

Tensor& opt_div_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& other,
                    Tensor& out) {
  if (!float_binary(ctx, "div.out", BinaryOp::kDiv, self, other, 1.0f, out)) {
    div_out(ctx, self, other, out);
  }
  return out;
}

Tensor& opt_mul_scalar_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           const Scalar& other,
                           Tensor& out) {
  if (!float_binary_scalar(
          ctx, "mul.Scalar_out", BinaryOp::kMul, self, other, out)) {
    mul_scalar_out(ctx, self, other, out);
  }
  return out;
}

Tensor& opt_div_scalar_out(KernelRuntimeContext& ctx,
                           const Tensor& self,
                           const Scalar& other,
                           Tensor& out) {
  if (!float_binary_scalar(
          ctx, "div.Scalar_out", BinaryOp::kDiv, self, other, out)) {
    div_scalar_out(ctx, self, other, out);
  }
  return out;
}

Tensor& opt_maximum_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Tensor& other,
                        Tensor& out) {
  if (!float_binary(
          ctx, "maximum.out", BinaryOp::kMaximum, self, other, 1.0f, out)) {
    maximum_out(ctx, self, other, out);
  }
  return out;
}

Tensor& opt_minimum_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        const Tensor& other,
                        Tensor& out) {
  if (!float_binary(
          ctx, "minimum.out", BinaryOp::kMinimum, self, other, 1.0f, out)) {
    minimum_out(ctx, self, other, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
