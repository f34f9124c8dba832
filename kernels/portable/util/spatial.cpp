#include <executorch/kernels/portable/util/spatial.h>

#include <cstdint>
#include <limits>

namespace torch {
namespace executor {
namespace native {

int64_t window_output_size(int64_t in,
                           int64_t kernel,
                           int64_t stride,
                           int64_t pad,
                           int64_t dilation,
                           bool ceil_mode) {
  // Parameters come from the program: past int32 the arithmetic below could
  // overflow, and no tensor has such a size anyway.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (in < 0 || in > kMax || kernel < 0 || kernel > kMax || stride <= 0 ||
      stride > kMax || pad < 0 || pad > kMax || dilation <= 0 ||
      dilation > kMax) {
    return -1;
  }
  // Rounded down, also when negative: with ceil_mode a kernel wider than
  // the padded input still has one window (PyTorch's rule).
  const int64_t span =
      in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  const int64_t floor_div =
      span >= 0 ? span / stride : -((-span + stride - 1) / stride);
  int64_t out = floor_div + 1;
  if (out <= 0) {
    return 0;
  }
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) {
    --out;
  }
  return out > kMax ? -1 : out;
}

} // namespace native
} // namespace executor
} // namespace torch
