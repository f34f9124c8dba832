#pragma once

// Shape arithmetic shared by convolution and pooling over 1-d and 2-d
// spatial dims. 1-d inputs ([N, C, L]) are handled as 2-d with H = 1.

#include <executorch/kernels/portable/util/checks.h>

namespace torch {
namespace executor {
namespace native {

// Per-dim parameter from a list that may hold one value for all dims (or
// none, meaning `fallback`).
inline int64_t param_at(IntArrayRef list, size_t i, int64_t fallback) {
  if (list.size() == 0) {
    return fallback;
  }
  return list.size() == 1 ? list[0] : list[i];
}

// Output length of a sliding window; ceil_mode lets the last window start
// inside the (left-padded) input. -1 when a parameter is negative (stride
// and dilation: not positive) or past int32, or the length is past int32.
int64_t window_output_size(int64_t in,
                           int64_t kernel,
                           int64_t stride,
                           int64_t pad,
                           int64_t dilation,
                           bool ceil_mode);

// Window geometry along H and W (H = 1 for 1-d).
struct Window2d {
  int64_t kernel[2];
  int64_t stride[2];
  int64_t pad[2];
  int64_t dilation[2];
  int64_t in[2];
  int64_t out[2];
};

} // namespace native
} // namespace executor
} // namespace torch
