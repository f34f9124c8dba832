// max_pool2d_with_indices on contiguous float32 [N, C, H, W] or [C, H, W]
// inputs without dilation (a CNN stem's 3x3 stride-2 pool): per output
// row, the column maxima over the window's rows, then each window's maximum
// of those (max_pool_row); planes over threads. Rows holding a NaN are
// scanned the portable way (the first NaN wins and its index is kept, as in
// PyTorch). Other dtypes, layouts, dilations and every bad argument go to
// the portable kernel.

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/kernels/portable/util/spatial.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

using ::executorch::kernels::optimized::thread_scratch;
using ::executorch::runtime::tensor_is_contiguous;

struct Axis {
  int64_t kernel, stride, pad, in, out;
};

// Reads the window along spatial dim i (0: H, 1: W); false unless the
// fast path covers it (no dilation; the portable kernel checks the rest).
bool axis_of(IntArrayRef kernel_size,
             IntArrayRef stride,
             IntArrayRef padding,
             IntArrayRef dilation,
             bool ceil_mode,
             size_t i,
             int64_t in,
             Axis* a) {
  a->kernel = param_at(kernel_size, i, 1);
  a->stride = param_at(stride, i, a->kernel);
  a->pad = param_at(padding, i, 0);
  a->in = in;
  if (param_at(dilation, i, 1) != 1 || a->kernel <= 0 || a->stride <= 0 ||
      a->pad < 0 || a->pad * 2 > a->kernel) {
    return false;
  }
  a->out = window_output_size(in, a->kernel, a->stride, a->pad, 1, ceil_mode);
  return a->out >= 0;
}

// The portable kernel's scan of one window: the first entry, then any
// greater one; a NaN wins and ends the scan.
void scan_window(const float* plane,
                 int64_t width,
                 int64_t y0,
                 int64_t y1,
                 int64_t x0,
                 int64_t x1,
                 float* best_out,
                 int64_t* index_out) {
  float best = std::numeric_limits<float>::lowest();
  int64_t index = -1;
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x = x0; x < x1; ++x) {
      const float v = plane[y * width + x];
      if (index < 0 || v > best || std::isnan(v)) {
        best = v;
        index = y * width + x;
      }
      if (std::isnan(v)) {
        *best_out = best;
        *index_out = index;
        return;
      }
    }
  }
  *best_out = best;
  *index_out = index;
}

// One output row in two passes that vectorize: per input column, the
// maximum over the window's rows and the first row holding it; then per
// window, the maximum of its columns', ties going to the smaller row, then
// the smaller column. That is the first maximum in row-major order, as the
// portable scan finds it. Rows holding a NaN are scanned the portable way.
void max_pool_row(const float* plane,
                  const Axis& h,
                  const Axis& w,
                  int64_t oy,
                  float* column_max,
                  int32_t* column_row,
                  float* best_out,
                  int64_t* index_out) {
  const int64_t ys = oy * h.stride - h.pad;
  const int64_t y0 = std::max<int64_t>(ys, 0);
  const int64_t y1 = std::min(ys + h.kernel, h.in);
  if (y0 >= y1) {
    std::fill(best_out, best_out + w.out, std::numeric_limits<float>::lowest());
    std::fill(index_out, index_out + w.out, -1);
    return;
  }
  // Unconditional stores through restrict pointers, so the loops vectorize.
  float* __restrict maxima = column_max;
  int32_t* __restrict rows = column_row;
  const float* __restrict first = plane + y0 * w.in;
  int32_t nan = 0;
  for (int64_t x = 0; x < w.in; ++x) {
    maxima[x] = first[x];
    rows[x] = static_cast<int32_t>(y0);
    nan |= static_cast<int32_t>(first[x] != first[x]);
  }
  for (int64_t y = y0 + 1; y < y1; ++y) {
    const float* __restrict row = plane + y * w.in;
    const auto row_index = static_cast<int32_t>(y);
    for (int64_t x = 0; x < w.in; ++x) {
      const float v = row[x];
      const float m = maxima[x];
      // All ones where v is greater; selects by mask, which GCC vectorizes
      // (a ?: becomes a branch on each entry).
      const int32_t greater = -static_cast<int32_t>(v > m);
      maxima[x] = m < v ? v : m;
      rows[x] = (row_index & greater) | (rows[x] & ~greater);
      nan |= static_cast<int32_t>(v != v);
    }
  }
  for (int64_t ox = 0; ox < w.out; ++ox) {
    const int64_t xs = ox * w.stride - w.pad;
    const int64_t x0 = std::max<int64_t>(xs, 0);
    const int64_t x1 = std::min(xs + w.kernel, w.in);
    if (x0 >= x1) {
      best_out[ox] = std::numeric_limits<float>::lowest();
      index_out[ox] = -1;
      continue;
    }
    if (nan) {
      scan_window(plane, w.in, y0, y1, x0, x1, &best_out[ox], &index_out[ox]);
      continue;
    }
    float best = column_max[x0];
    int32_t best_row = column_row[x0];
    int64_t best_x = x0;
    for (int64_t x = x0 + 1; x < x1; ++x) {
      const float v = column_max[x];
      const int32_t r = column_row[x];
      // Branch-free: which column wins is data, not a pattern.
      const bool take = (v > best) | ((v == best) & (r < best_row));
      best = take ? v : best;
      best_row = take ? r : best_row;
      best_x = take ? x : best_x;
    }
    best_out[ox] = best;
    index_out[ox] = best_row * w.in + best_x;
  }
}

bool max_pool_fast(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   IntArrayRef kernel_size,
                   IntArrayRef stride,
                   IntArrayRef padding,
                   IntArrayRef dilation,
                   bool ceil_mode,
                   Tensor& out,
                   Tensor& indices) {
  const int64_t rank = self.dim();
  if ((rank != 3 && rank != 4) || self.scalar_type() != ScalarType::Float ||
      out.scalar_type() != ScalarType::Float ||
      indices.scalar_type() != ScalarType::Long || kernel_size.size() == 0 ||
      kernel_size.size() > 2 || stride.size() > 2 || padding.size() > 2 ||
      dilation.size() > 2 || !tensor_is_contiguous(self)) {
    return false;
  }
  Axis h, w;
  if (!axis_of(kernel_size,
               stride,
               padding,
               dilation,
               ceil_mode,
               0,
               self.size(rank - 2),
               &h) ||
      !axis_of(kernel_size,
               stride,
               padding,
               dilation,
               ceil_mode,
               1,
               self.size(rank - 1),
               &w)) {
    return false;
  }
  ::executorch::aten::SizesType sizes[4];
  for (int64_t d = 0; d < rank - 2; ++d) {
    sizes[d] = self.size(d);
  }
  sizes[rank - 2] = static_cast<::executorch::aten::SizesType>(h.out);
  sizes[rank - 1] = static_cast<::executorch::aten::SizesType>(w.out);
  const ArrayRef<::executorch::aten::SizesType> shape(
      sizes, static_cast<size_t>(rank));
  const char* op = "max_pool2d_with_indices.out";
  if (!resize_out(ctx, op, "out", out, shape) ||
      !resize_out(ctx, op, "out", indices, shape)) {
    return true; // the context says why
  }
  if (!tensor_is_contiguous(out) || !tensor_is_contiguous(indices)) {
    return false;
  }
  if (h.in > std::numeric_limits<int32_t>::max()) {
    return false; // max_pool_row keeps rows as int32
  }
  const int64_t in_area = h.in * w.in;
  const int64_t out_area = h.out * w.out;
  const int64_t planes = in_area == 0 ? 0 : self.numel() / in_area;
  const float* in = self.const_data_ptr<float>();
  float* dst = out.mutable_data_ptr<float>();
  int64_t* idx = indices.mutable_data_ptr<int64_t>();
  const int64_t work = std::max<int64_t>(1, out_area * h.kernel * w.kernel);
  // Per thread: a row's column maxima and the row each came from.
  const size_t scratch_bytes =
      static_cast<size_t>(w.in) * (sizeof(float) + sizeof(int32_t));
  bool out_of_memory = false;
  ::executorch::extension::parallel_for(
      0,
      planes,
      std::max<int64_t>(1, 32768 / work),
      [&](int64_t begin, int64_t end) {
        void* scratch = thread_scratch(scratch_bytes);
        if (scratch == nullptr) {
          out_of_memory = true;
          return;
        }
        auto* column_max = static_cast<float*>(scratch);
        auto* column_row = reinterpret_cast<int32_t*>(column_max + w.in);
        for (int64_t p = begin; p < end; ++p) {
          const float* plane = in + p * in_area;
          for (int64_t oy = 0; oy < h.out; ++oy) {
            max_pool_row(plane,
                         h,
                         w,
                         oy,
                         column_max,
                         column_row,
                         dst + p * out_area + oy * w.out,
                         idx + p * out_area + oy * w.out);
          }
        }
      });
  if (out_of_memory) {
    fail_arg(ctx,
             "max_pool2d_with_indices.out",
             "out of memory for the pool's %zu-byte scratch",
             scratch_bytes);
  }
  return true;
}

} // namespace

std::tuple<Tensor&, Tensor&> opt_max_pool2d_with_indices_out(
    KernelRuntimeContext& ctx,
    const Tensor& self,
    IntArrayRef kernel_size,
    IntArrayRef stride,
    IntArrayRef padding,
    IntArrayRef dilation,
    bool ceil_mode,
    Tensor& out,
    Tensor& indices) {
  if (!max_pool_fast(ctx,
                     self,
                     kernel_size,
                     stride,
                     padding,
                     dilation,
                     ceil_mode,
                     out,
                     indices)) {
    return max_pool2d_with_indices_out(ctx,
                                       self,
                                       kernel_size,
                                       stride,
                                       padding,
                                       dilation,
                                       ceil_mode,
                                       out,
                                       indices);
  }
  return {out, indices};
}

} // namespace native
} // namespace executor
} // namespace torch
