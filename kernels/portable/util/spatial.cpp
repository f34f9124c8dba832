#include <executorch/kernels/portable/util/spatial.h>

namespace torch {
namespace executor {
namespace native {

int64_t window_output_size(int64_t in,
                           int64_t kernel,
                           int64_t stride,
                           int64_t pad,
                           int64_t dilation,
                           bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0) {
    return 0;
  }
  int64_t out = (span + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) {
    --out;
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
