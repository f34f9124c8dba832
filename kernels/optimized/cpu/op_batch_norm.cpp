// Inference batch norm (_native_batch_norm_legit_no_training) on float32:
// each channel is y = x * scale + shift with scale = weight / sqrt(var +
// eps) and shift = bias - mean * scale, computed once per channel (the
// portable kernel recomputes them per element). Contiguous NC... input: one
// vectorized affine pass per (image, channel) plane; channels-last: per
// pixel, the channel row times a scale row plus a shift row. Planes or
// pixels spread over the thread pool. Anything else goes to the portable
// kernel, which also reports bad arguments.

#include <algorithm>
#include <atomic>

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/batch_norm.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::BinaryOp;
using ::executorch::kernels::optimized::kCheapGrain;
using ::executorch::kernels::optimized::simd;
using ::executorch::kernels::optimized::thread_scratch;
using ::executorch::kernels::optimized::UnaryOp;

// A per-channel parameter the fast path takes: absent (when optional) or
// `channels` dense floats.
bool fits_channels(const Tensor* t, int64_t channels) {
  return t == nullptr || (t->scalar_type() == ScalarType::Float &&
                          t->numel() == channels &&
                          ::executorch::runtime::tensor_is_contiguous(*t));
}

// The portable kernel's per-channel scale and shift, in float.
using ChannelAffine = BatchNormAffine<float>;

// [N, C, inner] contiguous: plane p is channel p % C.
void batch_norm_planes(const ChannelAffine& affine,
                       const float* in,
                       float* out,
                       int64_t planes,
                       int64_t channels,
                       int64_t inner) {
  const auto& kernels = simd();
  ::executorch::extension::parallel_for(
      0,
      planes,
      std::max<int64_t>(1, kCheapGrain / std::max<int64_t>(inner, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t c = p % channels;
          const float scale = affine.scale(c);
          kernels.unary(UnaryOp::kAffine,
                        in + p * inner,
                        out + p * inner,
                        inner,
                        scale,
                        affine.shift(c, scale));
        }
      });
}

// [pixels, C] (channels-last): every pixel's channel row gets the same
// scale and shift rows, built once per task in thread scratch. False when
// scratch is exhausted.
bool batch_norm_rows(const ChannelAffine& affine,
                     const float* in,
                     float* out,
                     int64_t pixels,
                     int64_t channels) {
  const auto& kernels = simd();
  std::atomic<bool> ok{true};
  ::executorch::extension::parallel_for(
      0,
      pixels,
      std::max<int64_t>(1, kCheapGrain / std::max<int64_t>(channels, 1)),
      [&](int64_t begin, int64_t end) {
        float* rows = static_cast<float*>(
            thread_scratch(2 * static_cast<size_t>(channels) * sizeof(float)));
        if (rows == nullptr) {
          ok = false;
          return;
        }
        float* scale = rows;
        float* shift = rows + channels;
        for (int64_t c = 0; c < channels; ++c) {
          scale[c] = affine.scale(c);
          shift[c] = affine.shift(c, scale[c]);
        }
        for (int64_t p = begin; p < end; ++p) {
          float* o = out + p * channels;
          kernels.binary(
              BinaryOp::kMul, in + p * channels, 1, scale, 1, o, channels, 1);
          kernels.binary(BinaryOp::kAdd, o, 1, shift, 1, o, channels, 1);
        }
      });
  return ok.load();
}

bool is_channels_last(const Tensor& t) {
  const int64_t rank = t.dim();
  if (rank < 3) {
    return false;
  }
  // Strides of dim order (0, 2, 3, ..., 1), dense.
  int64_t expected = 1;
  if (t.strides()[1] != expected) {
    return false;
  }
  expected *= t.size(1);
  for (int64_t d = rank - 1; d >= 2; --d) {
    if (t.size(d) != 1 && t.strides()[d] != expected) {
      return false;
    }
    expected *= t.size(d);
  }
  return t.size(0) == 1 || t.strides()[0] == expected;
}

} // namespace

std::tuple<Tensor&, Tensor&, Tensor&>
opt__native_batch_norm_legit_no_training_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    const Tensor& running_mean,
    const Tensor& running_var,
    double momentum,
    double eps,
    Tensor& out,
    Tensor& save_mean,
    Tensor& save_invstd) {
  const char* op = "_native_batch_norm_legit_no_training.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(out, save_mean, save_invstd);
  const int64_t channels = input.dim() >= 2 ? input.size(1) : -1;
  const bool contiguous = ::executorch::runtime::tensor_is_contiguous(input);
  const bool fast =
      channels >= 0 && input.scalar_type() == ScalarType::Float &&
      out.scalar_type() == ScalarType::Float &&
      (contiguous || is_channels_last(input)) &&
      fits_channels(weight.has_value() ? &*weight : nullptr, channels) &&
      fits_channels(bias.has_value() ? &*bias : nullptr, channels) &&
      fits_channels(&running_mean, channels) &&
      fits_channels(&running_var, channels);
  if (!fast) {
    return _native_batch_norm_legit_no_training_out(ctx,
                                                    input,
                                                    weight,
                                                    bias,
                                                    running_mean,
                                                    running_var,
                                                    momentum,
                                                    eps,
                                                    out,
                                                    save_mean,
                                                    save_invstd);
  }
  // In inference the saved statistics are empty, as in PyTorch.
  const ::executorch::aten::SizesType empty[] = {0};
  if (!resize_like(ctx, op, out, input) ||
      !resize_out(ctx, op, "out1", save_mean, ArrayRef<::executorch::aten::SizesType>(empty, 1)) ||
      !resize_out(ctx, op, "out2", save_invstd, ArrayRef<::executorch::aten::SizesType>(empty, 1))) {
    return result;
  }
  if (out.strides() != input.strides()) {
    fail_arg(ctx, op, "out must have input's dim order");
    return result;
  }
  const ChannelAffine affine = {
      weight.has_value() ? weight->const_data_ptr<float>() : nullptr,
      bias.has_value() ? bias->const_data_ptr<float>() : nullptr,
      running_mean.const_data_ptr<float>(),
      running_var.const_data_ptr<float>(),
      static_cast<float>(eps)};
  const int64_t numel = input.numel();
  if (numel == 0) {
    return result;
  }
  const float* in = input.const_data_ptr<float>();
  float* o = out.mutable_data_ptr<float>();
  if (contiguous) {
    const int64_t planes = input.size(0) * channels;
    batch_norm_planes(affine, in, o, planes, channels, numel / planes);
  } else if (!batch_norm_rows(affine, in, o, numel / channels, channels)) {
    ctx.fail(Error::MemoryAllocationFailed);
  }
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
