#include <executorch/backends/xnnpack/runtime/qs8_common.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace qs8 {

bool vnni_available() {
#ifdef ET_QS8_HAVE_VNNI
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

bool adjusted_bias(const Qs8ConvQuant& quant,
                   const int32_t* bias,
                   size_t n,
                   int64_t filter_sum,
                   size_t products,
                   int32_t* adjusted) {
  const int64_t shift = 128 + int64_t(quant.input_zero_point);
  const int64_t value = (bias ? bias[n] : 0) - shift * filter_sum;
  // Largest sum a kernel adds to it: 255 * 128 per product.
  const int64_t max_sum = int64_t(255 * 128) * int64_t(products);
  if (std::abs(value) + max_sum > std::numeric_limits<int32_t>::max()) {
    return false;
  }
  *adjusted = static_cast<int32_t>(value);
  return true;
}

int8_t requantize(int32_t acc, float scale, const Requantization& r) {
  const float v =
      std::min(std::max(static_cast<float>(acc) * scale, r.low), r.high);
  return static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) +
                             r.zero_point);
}

} // namespace qs8
} // namespace xnnpack
} // namespace backends
} // namespace executorch
