// Normalizations: batch norm (with running or batch statistics), layer norm
// and group norm (which also return the mean and reciprocal std they used),
// and the gradients of layer norm and group norm.

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <tuple>

#include <executorch/kernels/portable/util/batch_norm.h>
#include <executorch/kernels/portable/util/reduce.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Checks an optional per-channel parameter: `count` elements of `like`'s
// dtype.
bool check_param(KernelRuntimeContext& ctx,
                 const char* op,
                 const char* name,
                 const std::optional<Tensor>& t,
                 int64_t count,
                 const Tensor& like) {
  if (!t.has_value()) {
    return true;
  }
  if (t->numel() != count) {
    fail_arg(ctx,
             op,
             "'%s' has %zd elements, expected %" PRId64,
             name,
             static_cast<ssize_t>(t->numel()),
             count);
    return false;
  }
  return check_same_dtype(ctx, op, name, *t, like) &&
         check_default_dim_order(ctx, op, {&*t});
}

template <typename T>
const T* data_or_null(const std::optional<Tensor>& t) {
  return t.has_value() ? t->const_data_ptr<T>() : nullptr;
}

// Normalizes n values of x to zero mean and unit variance (statistics in
// double, two passes, for precision), maps element i through
// affine(i, value) and stores mean and 1/std.
template <typename T, typename Affine>
void normalize_row(const T* x,
                   int64_t n,
                   double eps,
                   Affine affine,
                   T* y,
                   T* mean_out,
                   T* rstd_out) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += internal::convert<double>(x[i]);
  }
  const double mean = n > 0 ? sum / n : 0.0;
  double sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double dx = internal::convert<double>(x[i]) - mean;
    sq += dx * dx;
  }
  const double rstd = 1.0 / std::sqrt((n > 0 ? sq / n : 0.0) + eps);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = internal::convert<T>(
        affine(i, (internal::convert<double>(x[i]) - mean) * rstd));
  }
  *mean_out = internal::convert<T>(mean);
  *rstd_out = internal::convert<T>(rstd);
}

// The optional weight and bias element `c` applied to a normalized value.
template <typename T>
double apply_affine(const T* w, const T* b, int64_t c, double v) {
  return v * (w ? internal::convert<double>(w[c]) : 1.0) +
         (b ? internal::convert<double>(b[c]) : 0.0);
}

// Checks a normalization gradient's outputs: each one whose mask entry is
// set gets input's dtype and input's shape (grad_input) or `param_shape`
// (grad_weight, grad_bias).
bool prepare_norm_grads(KernelRuntimeContext& ctx,
                        const char* op,
                        ArrayRef<bool> output_mask,
                        const Tensor& input,
                        ArrayRef<SizesType> param_shape,
                        Tensor* const outs[3]) {
  if (output_mask.size() != 3) {
    fail_arg(ctx, op, "output_mask must have 3 entries");
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    if (!output_mask[k]) {
      continue;
    }
    const ArrayRef<SizesType> shape = k == 0 ? input.sizes() : param_shape;
    if (!check_same_dtype(ctx, op, "out", *outs[k], input) ||
        !resize_out(ctx, op, "out", *outs[k], shape) ||
        !check_default_dim_order(ctx, op, {outs[k]})) {
      return false;
    }
  }
  return true;
}

// The gradients of a normalization over `rows` rows of `lane` elements,
// row r with statistics mean[r], rstd[r] and element i scaled by the
// parameter channel(r, i) of `params` (weight, optional):
//   grad_input = rstd * (g - mean(g) - x_hat * mean(g * x_hat)),
//   g = grad_out * weight, x_hat = (x - mean) * rstd,
// grad_weight[c] = sum grad_out * x_hat, grad_bias[c] = sum grad_out.
// Sums run in double; parameter sums live in temp memory.
template <typename T, typename Channel>
void norm_backward(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& grad_out,
                   const Tensor& input,
                   const Tensor& mean,
                   const Tensor& rstd,
                   const std::optional<Tensor>& weight,
                   int64_t rows,
                   int64_t lane,
                   int64_t params,
                   Channel channel,
                   ArrayRef<bool> output_mask,
                   Tensor* const outs[3]) {
  double* param_sums = nullptr; // [2][params]: weight, then bias
  if (output_mask[1] || output_mask[2]) {
    auto temp = ctx.allocate_temp(
        static_cast<size_t>(2 * params + 1) * sizeof(double), alignof(double));
    if (!temp.ok()) {
      fail_arg(ctx,
               op,
               "needs temp memory for %" PRId64 " parameter sums",
               2 * params);
      return;
    }
    param_sums = static_cast<double*>(*temp);
    std::fill(param_sums, param_sums + 2 * params, 0.0);
  }
  const T* dy = grad_out.const_data_ptr<T>();
  const T* x = input.const_data_ptr<T>();
  const T* means = mean.const_data_ptr<T>();
  const T* rstds = rstd.const_data_ptr<T>();
  const T* w = data_or_null<T>(weight);
  T* dx = output_mask[0] ? outs[0]->mutable_data_ptr<T>() : nullptr;
  auto scale = [&](int64_t r, int64_t i) {
    return w ? internal::convert<double>(w[channel(r, i)]) : 1.0;
  };
  for (int64_t r = 0; r < rows; ++r) {
    const double m = internal::convert<double>(means[r]);
    const double s = internal::convert<double>(rstds[r]);
    const int64_t base = r * lane;
    double sum_g = 0, sum_g_xhat = 0;
    for (int64_t i = 0; i < lane; ++i) {
      const double x_hat = (internal::convert<double>(x[base + i]) - m) * s;
      const double d = internal::convert<double>(dy[base + i]);
      const double g = d * scale(r, i);
      sum_g += g;
      sum_g_xhat += g * x_hat;
      if (param_sums != nullptr) {
        param_sums[channel(r, i)] += d * x_hat;
        param_sums[params + channel(r, i)] += d;
      }
    }
    if (dx == nullptr || lane == 0) {
      continue;
    }
    const double mean_g = sum_g / lane, mean_g_xhat = sum_g_xhat / lane;
    for (int64_t i = 0; i < lane; ++i) {
      const double x_hat = (internal::convert<double>(x[base + i]) - m) * s;
      const double g = internal::convert<double>(dy[base + i]) * scale(r, i);
      dx[base + i] =
          internal::convert<T>(s * (g - mean_g - x_hat * mean_g_xhat));
    }
  }
  for (int k = 1; k < 3; ++k) {
    if (output_mask[k]) {
      T* o = outs[k]->mutable_data_ptr<T>();
      for (int64_t c = 0; c < params; ++c) {
        o[c] = internal::convert<T>(param_sums[(k - 1) * params + c]);
      }
    }
  }
}

// The number of elements each layer-norm row spans (the product of
// `normalized_shape`), after checking that it names 1 to input.dim()
// trailing dims of `input`; -1, with the failure recorded, otherwise.
int64_t layer_norm_lane(KernelRuntimeContext& ctx,
                        const char* op,
                        const Tensor& input,
                        IntArrayRef normalized_shape) {
  const int64_t norm_dims = static_cast<int64_t>(normalized_shape.size());
  if (norm_dims == 0 || norm_dims > input.dim()) {
    fail_arg(ctx,
             op,
             "normalized_shape must have 1 to %zd entries",
             static_cast<ssize_t>(input.dim()));
    return -1;
  }
  int64_t lane = 1;
  for (int64_t i = 0; i < norm_dims; ++i) {
    if (normalized_shape[i] != input.size(input.dim() - norm_dims + i)) {
      fail_arg(
          ctx, op, "normalized_shape does not match input's trailing dims");
      return -1;
    }
    lane *= normalized_shape[i];
  }
  return lane;
}

} // namespace

std::tuple<Tensor&, Tensor&, Tensor&> _native_batch_norm_legit_no_training_out(
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
  (void)momentum;
  if (input.dim() < 2) {
    fail_arg(ctx, op, "input must have at least 2 dims");
    return result;
  }
  const int64_t channels = input.size(1);
  Shape empty;
  empty.push_back(0);
  if (!check_same_dtype(ctx, op, "out", out, input) ||
      !check_param(ctx, op, "weight", weight, channels, input) ||
      !check_param(ctx, op, "bias", bias, channels, input) ||
      !check_param(ctx, op, "running_mean", running_mean, channels, input) ||
      !check_param(ctx, op, "running_var", running_var, channels, input) ||
      !resize_like(ctx, op, out, input) ||
      // In inference the saved statistics are empty, as in PyTorch.
      !resize_out(ctx, op, "out1", save_mean, empty.ref()) ||
      !resize_out(ctx, op, "out2", save_invstd, empty.ref())) {
    return result;
  }
  // Any dim order (exporters keep channels-last), the same for out, so that
  // an element's channel follows from its offset.
  if (out.strides() != input.strides()) {
    fail_arg(ctx, op, "out must have input's dim order");
    return result;
  }
  const int64_t channel_stride = input.strides()[1];
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    using C = std::conditional_t<internal::is_16bit_float<T>, float, T>;
    const BatchNormAffine<T, C> affine = {data_or_null<T>(weight),
                                          data_or_null<T>(bias),
                                          running_mean.const_data_ptr<T>(),
                                          running_var.const_data_ptr<T>(),
                                          static_cast<C>(eps)};
    const T* in = input.const_data_ptr<T>();
    T* o = out.mutable_data_ptr<T>();
    for (int64_t i = 0; i < input.numel(); ++i) {
      const int64_t c = (i / channel_stride) % channels;
      const C scale = affine.scale(c);
      o[i] = static_cast<T>(static_cast<C>(in[i]) * scale +
                            affine.shift(c, scale));
    }
  });
  return result;
}

std::tuple<Tensor&, Tensor&, Tensor&> native_layer_norm_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    IntArrayRef normalized_shape,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    double eps,
    Tensor& out,
    Tensor& mean_out,
    Tensor& rstd_out) {
  const char* op = "native_layer_norm.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(out, mean_out, rstd_out);
  const int64_t lane = layer_norm_lane(ctx, op, input, normalized_shape);
  if (lane < 0) {
    return result;
  }
  const int64_t axis =
      input.dim() - static_cast<int64_t>(normalized_shape.size());
  // mean and rstd keep the leading dims and have size 1 in the normalized
  // ones.
  Shape stat_shape;
  for (int64_t d = 0; d < input.dim(); ++d) {
    stat_shape.push_back(d < axis ? input.size(d) : 1);
  }
  if (!check_same_dtype(ctx, op, "out", out, input) ||
      !check_same_dtype(ctx, op, "mean", mean_out, input) ||
      !check_same_dtype(ctx, op, "rstd", rstd_out, input) ||
      !check_default_dim_order(ctx, op, {&input, &out}) ||
      !check_param(ctx, op, "weight", weight, lane, input) ||
      !check_param(ctx, op, "bias", bias, lane, input) ||
      !resize_like(ctx, op, out, input) ||
      !resize_out(ctx, op, "out1", mean_out, stat_shape.ref()) ||
      !resize_out(ctx, op, "out2", rstd_out, stat_shape.ref())) {
    return result;
  }
  const int64_t rows = lane == 0 ? 0 : input.numel() / lane;
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const T* in = input.const_data_ptr<T>();
    const T* w = data_or_null<T>(weight);
    const T* b = data_or_null<T>(bias);
    T* o = out.mutable_data_ptr<T>();
    T* means = mean_out.mutable_data_ptr<T>();
    T* rstds = rstd_out.mutable_data_ptr<T>();
    for (int64_t r = 0; r < rows; ++r) {
      normalize_row(
          in + r * lane,
          lane,
          eps,
          [w, b](int64_t i, double v) { return apply_affine(w, b, i, v); },
          o + r * lane,
          means + r,
          rstds + r);
    }
  });
  return result;
}

// Normalizes each of `group` channel groups of each sample over its
// channels and spatial positions, then applies per-channel weight and bias.
std::tuple<Tensor&, Tensor&, Tensor&> native_group_norm_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    double eps,
    Tensor& out,
    Tensor& mean_out,
    Tensor& rstd_out) {
  const char* op = "native_group_norm.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(out, mean_out, rstd_out);
  if (group <= 0 || C % group != 0 || N * C * HxW != input.numel() ||
      input.dim() < 2 || input.size(0) != N || input.size(1) != C) {
    fail_arg(ctx, op, "N, C, HxW and group do not match the input");
    return result;
  }
  Shape stat_shape;
  stat_shape.push_back(N);
  stat_shape.push_back(group);
  if (!check_same_dtype(ctx, op, "out", out, input) ||
      !check_same_dtype(ctx, op, "mean", mean_out, input) ||
      !check_same_dtype(ctx, op, "rstd", rstd_out, input) ||
      !check_default_dim_order(ctx, op, {&input, &out}) ||
      !check_param(ctx, op, "weight", weight, C, input) ||
      !check_param(ctx, op, "bias", bias, C, input) ||
      !resize_like(ctx, op, out, input) ||
      !resize_out(ctx, op, "out1", mean_out, stat_shape.ref()) ||
      !resize_out(ctx, op, "out2", rstd_out, stat_shape.ref())) {
    return result;
  }
  const int64_t per_group = C / group;
  const int64_t lane = per_group * HxW;
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const T* in = input.const_data_ptr<T>();
    const T* w = data_or_null<T>(weight);
    const T* b = data_or_null<T>(bias);
    T* o = out.mutable_data_ptr<T>();
    T* means = mean_out.mutable_data_ptr<T>();
    T* rstds = rstd_out.mutable_data_ptr<T>();
    for (int64_t r = 0; r < N * group; ++r) {
      const int64_t first_channel = (r % group) * per_group;
      normalize_row(
          in + r * lane,
          lane,
          eps,
          [w, b, first_channel, HxW](int64_t i, double v) {
            return apply_affine(w, b, first_channel + i / HxW, v);
          },
          o + r * lane,
          means + r,
          rstds + r);
    }
  });
  return result;
}

namespace {

// Batch norm with statistics from the batch itself (training mode). Saves
// the batch mean and 1/std, and moves running statistics (when given)
// toward the batch's by `momentum`, with the unbiased variance.
std::tuple<Tensor&, Tensor&, Tensor&> batch_norm_training(
    KernelRuntimeContext& ctx,
    const char* op,
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    Tensor* running_mean,
    Tensor* running_var,
    double momentum,
    double eps,
    Tensor& out,
    Tensor& save_mean,
    Tensor& save_invstd) {
  std::tuple<Tensor&, Tensor&, Tensor&> result(out, save_mean, save_invstd);
  if (input.dim() < 2) {
    fail_arg(ctx, op, "input must have at least 2 dims");
    return result;
  }
  const int64_t channels = input.size(1);
  Shape stat_shape;
  stat_shape.push_back(channels);
  const std::optional<Tensor> rm =
      running_mean ? std::optional<Tensor>(*running_mean) : std::nullopt;
  const std::optional<Tensor> rv =
      running_var ? std::optional<Tensor>(*running_var) : std::nullopt;
  if (!check_same_dtype(ctx, op, "out", out, input) ||
      !check_default_dim_order(ctx, op, {&input, &out}) ||
      !check_param(ctx, op, "weight", weight, channels, input) ||
      !check_param(ctx, op, "bias", bias, channels, input) ||
      !check_param(ctx, op, "running_mean", rm, channels, input) ||
      !check_param(ctx, op, "running_var", rv, channels, input) ||
      !check_same_dtype(ctx, op, "save_mean", save_mean, input) ||
      !check_same_dtype(ctx, op, "save_invstd", save_invstd, input) ||
      !resize_like(ctx, op, out, input) ||
      !resize_out(ctx, op, "save_mean", save_mean, stat_shape.ref()) ||
      !resize_out(ctx, op, "save_invstd", save_invstd, stat_shape.ref())) {
    return result;
  }
  int64_t inner = 1;
  for (ssize_t d = 2; d < input.dim(); ++d) {
    inner *= input.size(d);
  }
  const int64_t batch = input.size(0);
  const int64_t count = batch * inner;
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    const T* in = input.const_data_ptr<T>();
    const T* w = data_or_null<T>(weight);
    const T* b = data_or_null<T>(bias);
    T* o = out.mutable_data_ptr<T>();
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t i = 0; i < inner; ++i) {
          sum += internal::convert<double>(in[(n * channels + c) * inner + i]);
        }
      }
      const double mean = count > 0 ? sum / count : 0.0;
      double sq = 0;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t i = 0; i < inner; ++i) {
          const double dx =
              internal::convert<double>(in[(n * channels + c) * inner + i]) -
              mean;
          sq += dx * dx;
        }
      }
      const double var = count > 0 ? sq / count : 0.0;
      const double rstd = 1.0 / std::sqrt(var + eps);
      for (int64_t n = 0; n < batch; ++n) {
        T* row = o + (n * channels + c) * inner;
        const T* x = in + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) {
          row[i] = internal::convert<T>(apply_affine(
              w, b, c, (internal::convert<double>(x[i]) - mean) * rstd));
        }
      }
      save_mean.mutable_data_ptr<T>()[c] = internal::convert<T>(mean);
      save_invstd.mutable_data_ptr<T>()[c] = internal::convert<T>(rstd);
      if (running_mean != nullptr) {
        T& m = running_mean->mutable_data_ptr<T>()[c];
        m = internal::convert<T>((1 - momentum) * internal::convert<double>(m) +
                                 momentum * mean);
      }
      if (running_var != nullptr) {
        const double unbiased = count > 1 ? sq / (count - 1) : var;
        T& v = running_var->mutable_data_ptr<T>()[c];
        v = internal::convert<T>((1 - momentum) * internal::convert<double>(v) +
                                 momentum * unbiased);
      }
    }
  });
  return result;
}

} // namespace

std::tuple<Tensor&, Tensor&, Tensor&> _native_batch_norm_legit_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    Tensor& running_mean,
    Tensor& running_var,
    bool training,
    double momentum,
    double eps,
    Tensor& out,
    Tensor& save_mean,
    Tensor& save_invstd) {
  if (!training) {
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
  return batch_norm_training(ctx,
                             "_native_batch_norm_legit.out",
                             input,
                             weight,
                             bias,
                             &running_mean,
                             &running_var,
                             momentum,
                             eps,
                             out,
                             save_mean,
                             save_invstd);
}

std::tuple<Tensor&, Tensor&, Tensor&> _native_batch_norm_legit_no_stats_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    bool training,
    double momentum,
    double eps,
    Tensor& out,
    Tensor& save_mean,
    Tensor& save_invstd) {
  (void)training; // without running statistics only batch statistics exist
  return batch_norm_training(ctx,
                             "_native_batch_norm_legit.no_stats_out",
                             input,
                             weight,
                             bias,
                             nullptr,
                             nullptr,
                             momentum,
                             eps,
                             out,
                             save_mean,
                             save_invstd);
}

std::tuple<Tensor&, Tensor&, Tensor&> native_layer_norm_backward_out(
    KernelRuntimeContext& ctx,
    const Tensor& grad_out,
    const Tensor& input,
    IntArrayRef normalized_shape,
    const Tensor& mean,
    const Tensor& rstd,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    ArrayRef<bool> output_mask,
    Tensor& out0,
    Tensor& out1,
    Tensor& out2) {
  const char* op = "native_layer_norm_backward.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(out0, out1, out2);
  const int64_t lane = layer_norm_lane(ctx, op, input, normalized_shape);
  if (lane < 0) {
    return result;
  }
  const int64_t rows = lane == 0 ? 0 : input.numel() / lane;
  Tensor* const outs[3] = {&out0, &out1, &out2};
  Shape param_shape;
  for (int64_t size : normalized_shape) {
    param_shape.push_back(size);
  }
  if (grad_out.sizes() != input.sizes() || mean.numel() != rows ||
      rstd.numel() != rows) {
    fail_arg(ctx,
             op,
             "grad_out must have input's shape and mean, rstd %" PRId64
             " elements",
             rows);
    return result;
  }
  if (!check_same_dtype(ctx, op, "grad_out", grad_out, input) ||
      !check_same_dtype(ctx, op, "mean", mean, input) ||
      !check_same_dtype(ctx, op, "rstd", rstd, input) ||
      !check_default_dim_order(ctx, op, {&grad_out, &input, &mean, &rstd}) ||
      !check_param(ctx, op, "weight", weight, lane, input) ||
      !check_param(ctx, op, "bias", bias, lane, input) ||
      !prepare_norm_grads(
          ctx, op, output_mask, input, param_shape.ref(), outs)) {
    return result;
  }
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    norm_backward<T>(
        ctx,
        op,
        grad_out,
        input,
        mean,
        rstd,
        weight,
        rows,
        lane,
        lane,
        [](int64_t, int64_t i) { return i; },
        output_mask,
        outs);
  });
  return result;
}

std::tuple<Tensor&, Tensor&, Tensor&> native_group_norm_backward_out(
    KernelRuntimeContext& ctx,
    const Tensor& grad_out,
    const Tensor& input,
    const Tensor& mean,
    const Tensor& rstd,
    const std::optional<Tensor>& weight,
    int64_t N,
    int64_t C,
    int64_t HxW,
    int64_t group,
    ArrayRef<bool> output_mask,
    Tensor& out0,
    Tensor& out1,
    Tensor& out2) {
  const char* op = "native_group_norm_backward.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(out0, out1, out2);
  if (group <= 0 || C % group != 0 || N * C * HxW != input.numel() ||
      input.dim() < 2 || input.size(0) != N || input.size(1) != C ||
      grad_out.sizes() != input.sizes() || mean.numel() != N * group ||
      rstd.numel() != N * group) {
    fail_arg(ctx,
             op,
             "N, C, HxW and group do not match input, grad_out, mean or rstd");
    return result;
  }
  Tensor* const outs[3] = {&out0, &out1, &out2};
  const SizesType channels = static_cast<SizesType>(C);
  if (!check_same_dtype(ctx, op, "grad_out", grad_out, input) ||
      !check_same_dtype(ctx, op, "mean", mean, input) ||
      !check_same_dtype(ctx, op, "rstd", rstd, input) ||
      !check_default_dim_order(ctx, op, {&grad_out, &input, &mean, &rstd}) ||
      !check_param(ctx, op, "weight", weight, C, input) ||
      !prepare_norm_grads(ctx,
                          op,
                          output_mask,
                          input,
                          ArrayRef<SizesType>(&channels, 1),
                          outs)) {
    return result;
  }
  const int64_t per_group = C / group;
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, T, [&] {
    norm_backward<T>(
        ctx,
        op,
        grad_out,
        input,
        mean,
        rstd,
        weight,
        N * group,
        per_group * HxW,
        C,
        [group, per_group, HxW](int64_t r, int64_t i) {
          return (r % group) * per_group + i / HxW;
        },
        output_mask,
        outs);
  });
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
