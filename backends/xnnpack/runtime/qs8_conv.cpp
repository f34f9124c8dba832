#include <executorch/backends/xnnpack/runtime/qs8_conv.h>

#include <algorithm>
#include <cstring>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

// A tile is kTileRows output pixels (rows of the im2col matrix); filters come
// in blocks of kBlock output channels, one 512-bit register of int32 sums.
constexpr size_t kTileRows = 8;
constexpr size_t kBlock = 16;

using qs8::round_up;

// What the vector and the portable tile kernels share: where the tile's
// operands are and how to requantize.
struct TileArgs {
  // kTileRows rows of `reduction4` unsigned activations.
  const uint8_t* a;
  size_t reduction4;
  // The filter block of the tile's first channel; the next block follows
  // `block_bytes` later.
  const int8_t* filter;
  size_t block_bytes;
  const int32_t* bias;
  const float* scale;
  qs8::Requantization requantization;
  int8_t* out;
  size_t out_stride;
  size_t rows;
  size_t channels;
};

void tile_portable(const TileArgs& t) {
  for (size_t r = 0; r < t.rows; ++r) {
    const uint8_t* a = t.a + r * t.reduction4;
    for (size_t n = 0; n < t.channels; ++n) {
      const int8_t* w =
          t.filter + (n / kBlock) * t.block_bytes + (n % kBlock) * 4;
      int32_t acc = t.bias[n];
      for (size_t k = 0; k < t.reduction4; k += 4) {
        const int8_t* wk = w + k * kBlock;
        for (size_t i = 0; i < 4; ++i) {
          acc += int32_t(a[k + i]) * int32_t(wk[i]);
        }
      }
      t.out[r * t.out_stride + n] =
          qs8::requantize(acc, t.scale[n], t.requantization);
    }
  }
}

#ifdef ET_QS8_HAVE_VNNI
// kTileRows x (kBlocks * 16) sums, all in registers: per 4 reduction steps,
// kBlocks filter loads and kTileRows broadcasts feed kTileRows * kBlocks
// vpdpbusd.
template <size_t kBlocks>
ET_QS8_VNNI_TARGET void tile_vnni(const TileArgs& t) {
  __m512i acc[kTileRows][kBlocks];
#pragma GCC unroll 8
  for (size_t r = 0; r < kTileRows; ++r) {
#pragma GCC unroll 2
    for (size_t b = 0; b < kBlocks; ++b) {
      acc[r][b] = _mm512_loadu_si512(t.bias + b * kBlock);
    }
  }
  for (size_t k = 0; k < t.reduction4; k += 4) {
    __m512i w[kBlocks];
#pragma GCC unroll 2
    for (size_t b = 0; b < kBlocks; ++b) {
      w[b] = _mm512_loadu_si512(t.filter + b * t.block_bytes + k * kBlock);
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < kTileRows; ++r) {
      int32_t four;
      std::memcpy(&four, t.a + r * t.reduction4 + k, sizeof(four));
      const __m512i x = _mm512_set1_epi32(four);
#pragma GCC unroll 2
      for (size_t b = 0; b < kBlocks; ++b) {
        acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], x, w[b]);
      }
    }
  }
  const qs8::Requantization16 requantization = qs8::broadcast(t.requantization);
  for (size_t r = 0; r < t.rows; ++r) {
    for (size_t b = 0; b < kBlocks && b * kBlock < t.channels; ++b) {
      const __m128i q = qs8::requantize16(
          acc[r][b], _mm512_loadu_ps(t.scale + b * kBlock), requantization);
      _mm_mask_storeu_epi8(
          t.out + r * t.out_stride + b * kBlock,
          qs8::first_lanes(std::min(kBlock, t.channels - b * kBlock)),
          q);
    }
  }
}
#endif

} // namespace

struct Qs8Conv::Task {
  const Qs8Conv* conv;
  const int8_t* in;
  size_t in_h, in_w;
  int8_t* out;
  size_t out_h, out_w;
  size_t rows;
  bool vnni;
};

bool Qs8Conv::init(const Qs8ConvShape& shape,
                   const Qs8ConvQuant& quant,
                   const int8_t* filter,
                   const int32_t* bias) {
  shape_ = shape;
  reduction_ = shape.kernel_h * shape.kernel_w * shape.in_channels;
  reduction4_ = round_up(reduction_, 4);
  if (reduction_ == 0 || reduction4_ > kMaxReduction ||
      shape.out_channels == 0) {
    return false;
  }
  const size_t channels = round_up(shape.out_channels, kBlock);
  const size_t block_bytes = reduction4_ * kBlock;
  packed_.assign(channels / kBlock * block_bytes, 0);
  bias_.assign(channels, 0);
  scale_.assign(channels, 0.0f);
  for (size_t n = 0; n < shape.out_channels; ++n) {
    const int8_t* row = filter + n * reduction_;
    int8_t* block = packed_.data() + (n / kBlock) * block_bytes;
    int64_t sum = 0;
    for (size_t k = 0; k < reduction_; ++k) {
      block[(k / 4) * kBlock * 4 + (n % kBlock) * 4 + k % 4] = row[k];
      sum += row[k];
    }
    if (!qs8::adjusted_bias(quant, bias, n, sum, reduction4_, &bias_[n])) {
      return false;
    }
    scale_[n] = qs8::channel_scale(quant, n);
  }
  pad_value_ = qs8::pad_byte(quant);
  requantization_ = qs8::Requantization(quant);
  return true;
}

void Qs8Conv::run_rows(void* context, size_t tile) {
  const Task& task = *static_cast<const Task*>(context);
  const Qs8Conv& conv = *task.conv;
  const Qs8ConvShape& s = conv.shape_;
  const size_t first = tile * kTileRows;
  const size_t rows = std::min(kTileRows, task.rows - first);
  const size_t reduction4 = conv.reduction4_;
  // The tile's im2col rows, unsigned; rows past `rows` are zeros the vector
  // kernel computes and does not store.
  alignas(64) uint8_t a[kTileRows * kMaxReduction];
  const size_t ic = s.in_channels;
  for (size_t i = 0; i < kTileRows; ++i) {
    uint8_t* row = a + i * reduction4;
    if (i >= rows) {
      std::memset(row, 0, reduction4);
      continue;
    }
    const size_t m = first + i;
    const size_t ox = m % task.out_w;
    const size_t oy = (m / task.out_w) % task.out_h;
    const size_t b = m / (task.out_w * task.out_h);
    const size_t window = s.kernel_w * ic;
    for (size_t ky = 0; ky < s.kernel_h; ++ky) {
      // Unsigned wrap-around makes a position in the top or left padding
      // huge, so one comparison tests both ends.
      const size_t iy = oy * s.stride_h + ky * s.dilation_h - s.pad_top;
      uint8_t* dst = row + ky * window;
      if (iy >= task.in_h) {
        std::memset(dst, conv.pad_value_, window);
        continue;
      }
      const int8_t* in_row = task.in + (b * task.in_h + iy) * task.in_w * ic;
      const size_t ix0 = ox * s.stride_w - s.pad_left;
      if (s.dilation_w == 1 && ix0 < task.in_w &&
          task.in_w - ix0 >= s.kernel_w) {
        // The window's pixels are adjacent in NHWC: one run of bytes.
        qs8::flip_signs(in_row + ix0 * ic, dst, window);
        continue;
      }
      for (size_t kx = 0; kx < s.kernel_w; ++kx) {
        const size_t ix = ix0 + kx * s.dilation_w;
        if (ix < task.in_w) {
          qs8::flip_signs(in_row + ix * ic, dst + kx * ic, ic);
        } else {
          std::memset(dst + kx * ic, conv.pad_value_, ic);
        }
      }
    }
    std::memset(row + conv.reduction_, 0, reduction4 - conv.reduction_);
  }
  const size_t channels = s.out_channels;
  const size_t block_bytes = reduction4 * kBlock;
  TileArgs t;
  t.a = a;
  t.reduction4 = reduction4;
  t.block_bytes = block_bytes;
  t.requantization = conv.requantization_;
  t.out_stride = channels;
  t.rows = rows;
  if (!task.vnni) {
    t.filter = conv.packed_.data();
    t.bias = conv.bias_.data();
    t.scale = conv.scale_.data();
    t.out = task.out + first * channels;
    t.channels = channels;
    tile_portable(t);
    return;
  }
#ifdef ET_QS8_HAVE_VNNI
  for (size_t n = 0; n < channels; n += 2 * kBlock) {
    t.filter = conv.packed_.data() + (n / kBlock) * block_bytes;
    t.bias = conv.bias_.data() + n;
    t.scale = conv.scale_.data() + n;
    t.out = task.out + first * channels + n;
    t.channels = channels - n;
    if (channels - n > kBlock) {
      tile_vnni<2>(t);
    } else {
      tile_vnni<1>(t);
    }
  }
#endif
}

void Qs8Conv::run(const int8_t* in,
                  size_t batch,
                  size_t in_h,
                  size_t in_w,
                  int8_t* out,
                  size_t out_h,
                  size_t out_w,
                  pthreadpool_t pool,
                  bool vnni) const {
  Task task{this,
            in,
            in_h,
            in_w,
            out,
            out_h,
            out_w,
            batch * out_h * out_w,
            vnni && qs8::vnni_available()};
  const size_t tiles = (task.rows + kTileRows - 1) / kTileRows;
  // Workers sleep after the convolution, as after an XNNPACK runtime
  // (compiler.cpp): spinning workers starve the caller on a busy machine.
  pthreadpool_parallelize_1d(
      pool, &Qs8Conv::run_rows, &task, tiles, PTHREADPOOL_FLAG_YIELD_WORKERS);
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
