// Float32 activations and math functions as vectorized runs: gelu, relu,
// hardtanh, sigmoid, tanh, silu, exp, hardswish, neg, abs, sqrt, rsqrt,
// reciprocal. Other dtypes and layouts go to the portable kernels.

#include <executorch/kernels/optimized/cpu/float_ops.h>
#include <executorch/kernels/optimized/cpu/float_runs.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/checks.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::all_float;
using ::executorch::kernels::optimized::FloatRun;
using ::executorch::kernels::optimized::for_each_float_run;
using ::executorch::kernels::optimized::simd;
using ::executorch::kernels::optimized::unary_grain;
using ::executorch::kernels::optimized::UnaryOp;

// true when the float path wrote `out` or failed `ctx`; false when the
// portable kernel should run instead.
bool float_unary(KernelRuntimeContext& ctx,
                 const char* name,
                 UnaryOp op,
                 const Tensor& in,
                 Tensor& out,
                 float p0 = 0.0f,
                 float p1 = 0.0f) {
  if (!all_float({&in, &out})) {
    return false;
  }
  if (!resize_like(ctx, name, out, in)) {
    return true;
  }
  // `in` has `out`'s shape, so its runs are contiguous too (a run of one
  // element may come with step 0).
  const auto& kernels = simd();
  return for_each_float_run(
      out, {&in}, unary_grain(op), [&](const FloatRun& run) {
        kernels.unary(op, run.in[0], run.out, run.n, p0, p1);
      });
}

} // namespace

#define ET_OPT_UNARY(name, op, portable)                            \
  Tensor& opt_##name##_out(                                         \
      KernelRuntimeContext& ctx, const Tensor& self, Tensor& out) { \
    if (!float_unary(ctx, #name ".out", op, self, out)) {           \
      portable(ctx, self, out);                                     \
    }                                                               \
    return out;                                                     \
  }

ET_OPT_UNARY(relu, UnaryOp::kRelu, relu_out)
ET_OPT_UNARY(sigmoid, UnaryOp::kSigmoid, sigmoid_out)
ET_OPT_UNARY(tanh, UnaryOp::kTanh, tanh_out)
ET_OPT_UNARY(silu, UnaryOp::kSilu, silu_out)
ET_OPT_UNARY(exp, UnaryOp::kExp, exp_out)
ET_OPT_UNARY(hardswish, UnaryOp::kHardswish, hardswish_out)
ET_OPT_UNARY(neg, UnaryOp::kNeg, neg_out)
ET_OPT_UNARY(abs, UnaryOp::kAbs, abs_out)
ET_OPT_UNARY(sqrt, UnaryOp::kSqrt, sqrt_out)
ET_OPT_UNARY(rsqrt, UnaryOp::kRsqrt, rsqrt_out)
ET_OPT_UNARY(reciprocal, UnaryOp::kReciprocal, reciprocal_out)

#undef ET_OPT_UNARY

Tensor& opt_gelu_out(KernelRuntimeContext& ctx,
                     const Tensor& self,
                     std::string_view approximate,
                     Tensor& out) {
  // An unknown approximation is the portable kernel's error to report.
  const bool known = approximate == "none" || approximate == "tanh";
  const UnaryOp op =
      approximate == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGeluErf;
  if (!known || !float_unary(ctx, "gelu.out", op, self, out)) {
    gelu_out(ctx, self, approximate, out);
  }
  return out;
}

Tensor& opt_hardtanh_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         const Scalar& min_val,
                         const Scalar& max_val,
                         Tensor& out) {
  if (!float_unary(ctx,
                   "hardtanh.out",
                   UnaryOp::kClamp,
                   self,
                   out,
                   min_val.to<float>(),
                   max_val.to<float>())) {
    hardtanh_out(ctx, self, min_val, max_val, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
