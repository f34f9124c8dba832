#include <executorch/kernels/optimized/cpu/float_runs.h>

#include <algorithm>

#include <executorch/kernels/portable/util/elementwise.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using torch::executor::native::kMaxDims;

bool all_float(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->scalar_type() != ScalarType::Float) {
      return false;
    }
  }
  return true;
}

bool for_each_float_run(
    const Tensor& out,
    std::initializer_list<const Tensor*> inputs,
    int64_t grain,
    ::executorch::runtime::FunctionRef<void(const FloatRun&)> fn) {
  namespace native = torch::executor::native;
  const size_t count = inputs.size();
  if (count > 2 || out.dim() > static_cast<ssize_t>(kMaxDims)) {
    return false;
  }
  const size_t rank = out.dim();
  int64_t sizes[kMaxDims];
  int64_t strides[3][kMaxDims];
  int64_t* stride_ptrs[3] = {strides[0], strides[1], strides[2]};
  const native::OutOperand out_op = native::out_operand(out);
  const float* in_data[2] = {nullptr, nullptr};
  size_t k = 0;
  for (const Tensor* t : inputs) {
    const native::Operand op = native::broadcast_operand(*t, out.sizes());
    in_data[k] = reinterpret_cast<const float*>(op.data);
    std::copy(op.strides, op.strides + rank, strides[k + 1]);
    ++k;
  }
  for (size_t d = 0; d < rank; ++d) {
    sizes[d] = out.size(d);
    strides[0][d] = out_op.strides[d];
  }
  if (out.numel() == 0) {
    return true;
  }
  const size_t ndim =
      native::internal::coalesce(sizes, rank, stride_ptrs, count + 1);
  const int64_t inner = ndim == 0 ? 1 : sizes[ndim - 1];
  int64_t step[2] = {0, 0};
  if (ndim > 0) {
    if (strides[0][ndim - 1] != 1) {
      return false;
    }
    for (size_t i = 0; i < count; ++i) {
      step[i] = strides[i + 1][ndim - 1];
      if (step[i] != 0 && step[i] != 1) {
        return false;
      }
    }
  }
  const size_t outer_dims = ndim == 0 ? 0 : ndim - 1;
  int64_t rows = 1;
  for (size_t d = 0; d < outer_dims; ++d) {
    rows *= sizes[d];
  }
  // Few long rows are cut into pieces so that every thread gets work.
  const int64_t pieces =
      rows >= ::executorch::extension::get_thread_count()
          ? 1
          : std::max<int64_t>(
                1,
                std::min<int64_t>(inner / std::max<int64_t>(grain, 1),
                                  ::executorch::extension::get_thread_count()));
  const int64_t piece_len = (inner + pieces - 1) / pieces;
  const int64_t units = rows * pieces;
  const int64_t units_per_task =
      std::max<int64_t>(1, grain / std::max<int64_t>(piece_len, 1));
  float* out_data = reinterpret_cast<float*>(out_op.data);
  ::executorch::extension::parallel_for(
      0, units, units_per_task, [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          int64_t row = u / pieces;
          const int64_t piece = u % pieces;
          // Offsets of this row: its index decomposed over the outer dims.
          int64_t offset[3] = {0, 0, 0};
          for (int64_t d = static_cast<int64_t>(outer_dims) - 1; d >= 0; --d) {
            const int64_t index = row % sizes[d];
            row /= sizes[d];
            for (size_t t = 0; t <= count; ++t) {
              offset[t] += index * strides[t][d];
            }
          }
          const int64_t start = piece * piece_len;
          const int64_t n = std::min(piece_len, inner - start);
          if (n <= 0) {
            continue;
          }
          FloatRun run;
          run.out = out_data + offset[0] + start;
          for (size_t t = 0; t < 2; ++t) {
            run.in[t] = t < count ? in_data[t] + offset[t + 1] + start * step[t]
                                  : nullptr;
            run.step[t] = step[t];
          }
          run.n = n;
          fn(run);
        }
      });
  return true;
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
