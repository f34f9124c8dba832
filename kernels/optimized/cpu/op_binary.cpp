// add, sub, mul, div on float32 as vectorized runs (float_runs.h): dense
// operands, a row or channel broadcast, a scalar tensor. Other dtypes and
// layouts go to the portable kernels.

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
  return for_each_float_run(out, {&a, &b}, [&](const FloatRun& run) {
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
