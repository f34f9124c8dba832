#include <executorch/backends/xnnpack/runtime/qs8_conv.h>

#include <executorch/kernels/quantized/cpu/dpbusd.h>

#include <algorithm>
#include <cstring>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

// A tile is kTileRows output pixels (rows of the im2col matrix), or
// kShortTileRows when those divide the pixels and kTileRows do not (7x7
// and 14x14 outputs: no tile computes rows it does not store); filters come
// in blocks of kBlock output channels, one 512-bit register of int32 sums.
constexpr size_t kTileRows = 8;
constexpr size_t kShortTileRows = 7;
constexpr size_t kBlock = 16;

using qs8::round_up;

// What the vector and the portable tile kernels share: where the tile's
// operands are and how to requantize.
struct TileArgs {
  // The tile's rows of `reduction4` activations, `a_stride` apart (the vector
  // kernel computes them all), read as they are and shifted to unsigned
  // (x + 128) as they are multiplied.
  const int8_t* a;
  size_t a_stride;
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
    const int8_t* a = t.a + r * t.a_stride;
    for (size_t n = 0; n < t.channels; ++n) {
      const int8_t* w =
          t.filter + (n / kBlock) * t.block_bytes + (n % kBlock) * 4;
      int32_t acc = t.bias[n];
      for (size_t k = 0; k < t.reduction4; k += 4) {
        const int8_t* wk = w + k * kBlock;
        for (size_t i = 0; i < 4; ++i) {
          acc += int32_t(wk[i]) * (int32_t(a[k + i]) + 128);
        }
      }
      t.out[r * t.out_stride + n] =
          qs8::requantize(acc, t.scale[n], t.requantization);
    }
  }
}

// How im2col moves bytes: memcpy and memset, or (MaskedBytes) one masked
// AVX-512 load and store per run of up to 64 bytes. A small-channel
// window's rows are short (MobileNetV2's stem: 9 bytes, then a 1-byte
// tail), and library calls per run took most of that convolution's time.
struct LibraryBytes {
  static void copy(int8_t* dst, const int8_t* src, size_t n) {
    std::memcpy(dst, src, n);
  }
  static void fill(int8_t* dst, int8_t value, size_t n) {
    std::memset(dst, value, n);
  }
};

#ifdef ET_QS8_HAVE_VNNI
struct MaskedBytes {
  ET_QS8_VNNI_TARGET static void copy(int8_t* dst,
                                      const int8_t* src,
                                      size_t n) {
    if (n > 64) {
      std::memcpy(dst, src, n);
      return;
    }
    const __mmask64 mask = qs8::first_bytes(n);
    _mm512_mask_storeu_epi8(dst, mask, _mm512_maskz_loadu_epi8(mask, src));
  }
  ET_QS8_VNNI_TARGET static void fill(int8_t* dst, int8_t value, size_t n) {
    if (n > 64) {
      std::memset(dst, value, n);
      return;
    }
    _mm512_mask_storeu_epi8(dst, qs8::first_bytes(n), _mm512_set1_epi8(value));
  }
};

// kRows x (kBlocks * 16) sums, all in registers: per 4 reduction steps,
// kBlocks filter loads and kRows broadcasts (with the sign bit flipped:
// the unsigned operand) feed kRows * kBlocks vpdpbusd.
template <size_t kBlocks, size_t kRows>
ET_QS8_VNNI_TARGET void tile_vnni(const TileArgs& t) {
  __m512i acc[kRows][kBlocks];
#pragma GCC unroll 2
  for (size_t b = 0; b < kBlocks; ++b) {
    const __m512i bias = _mm512_loadu_si512(t.bias + b * kBlock);
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
      acc[r][b] = bias;
    }
  }
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (size_t k = 0; k < t.reduction4; k += 4) {
    __m512i w[kBlocks];
#pragma GCC unroll 2
    for (size_t b = 0; b < kBlocks; ++b) {
      w[b] = _mm512_loadu_si512(t.filter + b * t.block_bytes + k * kBlock);
    }
#pragma GCC unroll 8
    for (size_t r = 0; r < kRows; ++r) {
      int32_t four;
      std::memcpy(&four, t.a + r * t.a_stride + k, sizeof(four));
      const __m512i x = _mm512_xor_si512(_mm512_set1_epi32(four), flip);
#pragma GCC unroll 2
      for (size_t b = 0; b < kBlocks; ++b) {
        acc[r][b] = kernels::vnni::dpbusd(acc[r][b], x, w[b]);
      }
    }
  }
  // Requantized four vectors at a time: two rows of 32 channels, or four
  // of 16, which a permutation of the packs' dwords puts in row order.
  const qs8::Requantization16 requantization = qs8::broadcast(t.requantization);
  __m512 scale[kBlocks];
  for (size_t b = 0; b < kBlocks; ++b) {
    scale[b] = _mm512_loadu_ps(t.scale + b * kBlock);
  }
  const __m512i order =
      _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  constexpr size_t kRowsPerPack = 4 / kBlocks;
  const size_t width = std::min(kBlocks * kBlock, t.channels);
  for (size_t r = 0; r < kRows && r < t.rows; r += kRowsPerPack) {
    __m512i four[4];
    __m512 four_scales[4];
    for (size_t i = 0; i < 4; ++i) {
      // (A pack past the last row repeats it; it is not stored.)
      four[i] = acc[std::min(r + i / kBlocks, kRows - 1)][i % kBlocks];
      four_scales[i] = scale[i % kBlocks];
    }
    const __m512i q = _mm512_permutexvar_epi32(
        order, qs8::requantize64(four, four_scales, requantization));
    int8_t* out = t.out + r * t.out_stride;
    const size_t rows = std::min(kRowsPerPack, t.rows - r);
    if constexpr (kBlocks == 2) {
      const __mmask32 mask =
          static_cast<__mmask32>(width == 32 ? ~0u : (1u << width) - 1);
      _mm256_mask_storeu_epi8(out, mask, _mm512_castsi512_si256(q));
      if (rows > 1) {
        _mm256_mask_storeu_epi8(
            out + t.out_stride, mask, _mm512_extracti64x4_epi64(q, 1));
      }
    } else {
      const __mmask16 mask = qs8::first_lanes(width);
      _mm_mask_storeu_epi8(out, mask, _mm512_castsi512_si128(q));
      if (rows > 1) {
        _mm_mask_storeu_epi8(
            out + t.out_stride, mask, _mm512_extracti32x4_epi32(q, 1));
      }
      if (rows > 2) {
        _mm_mask_storeu_epi8(
            out + 2 * t.out_stride, mask, _mm512_extracti32x4_epi32(q, 2));
      }
      if (rows > 3) {
        _mm_mask_storeu_epi8(
            out + 3 * t.out_stride, mask, _mm512_extracti32x4_epi32(q, 3));
      }
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
  // Each tile's output channels in `channel_parts` work items of
  // `part_channels` (a multiple of 2 * kBlock) each.
  size_t channel_parts;
  size_t part_channels;
  // Output pixels per tile: kTileRows or kShortTileRows.
  size_t tile_rows;
};

// Output pixel (image, row, column) `m` of a run, and the next one.
struct Qs8Conv::Pixel {
  size_t b, y, x;

  Pixel(const Task& task, size_t m)
      : b(m / (task.out_w * task.out_h)),
        y((m / task.out_w) % task.out_h),
        x(m % task.out_w) {}

  void next(const Task& task) {
    if (++x == task.out_w) {
      x = 0;
      if (++y == task.out_h) {
        y = 0;
        ++b;
      }
    }
  }
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
  pointwise_ =
      shape.kernel_h == 1 && shape.kernel_w == 1 && reduction_ == reduction4_;
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
    if (!qs8::adjusted_bias(quant, bias, n, sum, reduction_, &bias_[n])) {
      return false;
    }
    scale_[n] = qs8::channel_scale(quant, n);
  }
  pad_value_ = static_cast<int8_t>(quant.input_zero_point);
  requantization_ = qs8::Requantization(quant);
  return true;
}

const int8_t* Qs8Conv::tile_in_input(const Task& task,
                                     size_t first,
                                     size_t* stride) const {
  const size_t tile_rows = task.tile_rows;
  if (!pointwise_ || task.rows - first < tile_rows) {
    return nullptr;
  }
  const Qs8ConvShape& s = shape_;
  const Pixel p(task, first);
  const size_t ox = p.x, oy = p.y, b = p.b;
  // Unsigned wrap-around makes a position in the top or left padding huge,
  // so one comparison tests both ends.
  const size_t iy = oy * s.stride_h - s.pad_top;
  const size_t ix = ox * s.stride_w - s.pad_left;
  if (iy >= task.in_h || ix >= task.in_w) {
    return nullptr;
  }
  if (ox + tile_rows <= task.out_w) {
    // Within one output row: the last pixel is the farthest.
    if ((ox + tile_rows - 1) * s.stride_w - s.pad_left >= task.in_w) {
      return nullptr;
    }
    *stride = s.stride_w * s.in_channels;
  } else if (s.stride_h == 1 && s.stride_w == 1 && s.pad_left == 0 &&
             task.out_w == task.in_w) {
    // Across output rows that are whole input rows, in one image.
    const Pixel last(task, first + tile_rows - 1);
    if (last.b != b || last.y - s.pad_top >= task.in_h) {
      return nullptr;
    }
    *stride = s.in_channels;
  } else {
    return nullptr;
  }
  return task.in + ((b * task.in_h + iy) * task.in_w + ix) * s.in_channels;
}

template <typename Bytes>
__attribute__((always_inline)) inline void Qs8Conv::im2col(const Task& task,
                                                           size_t first,
                                                           size_t rows,
                                                           int8_t* dst) const {
  const Qs8ConvShape& s = shape_;
  const size_t ic = s.in_channels;
  const size_t window = s.kernel_w * ic;
  Pixel p(task, first);
  for (size_t i = 0; i < rows; ++i, p.next(task), dst += reduction4_) {
    const size_t ix0 = p.x * s.stride_w - s.pad_left;
    for (size_t ky = 0; ky < s.kernel_h; ++ky) {
      // Unsigned wrap-around makes a position in the top or left padding
      // huge, so one comparison tests both ends.
      const size_t iy = p.y * s.stride_h + ky * s.dilation_h - s.pad_top;
      int8_t* row = dst + ky * window;
      if (iy >= task.in_h) {
        Bytes::fill(row, pad_value_, window);
        continue;
      }
      const int8_t* in_row = task.in + (p.b * task.in_h + iy) * task.in_w * ic;
      if (s.dilation_w == 1 && ix0 < task.in_w &&
          task.in_w - ix0 >= s.kernel_w) {
        // The window's pixels are adjacent in NHWC: one run of bytes.
        Bytes::copy(row, in_row + ix0 * ic, window);
        continue;
      }
      for (size_t kx = 0; kx < s.kernel_w; ++kx) {
        const size_t ix = ix0 + kx * s.dilation_w;
        if (ix < task.in_w) {
          Bytes::copy(row + kx * ic, in_row + ix * ic, ic);
        } else {
          Bytes::fill(row + kx * ic, pad_value_, ic);
        }
      }
    }
    // The filter is zero past the reduction: these bytes add nothing.
    Bytes::fill(dst + reduction_, 0, reduction4_ - reduction_);
  }
}

#ifdef ET_QS8_HAVE_VNNI
ET_QS8_VNNI_TARGET void Qs8Conv::im2col_vnni(const Qs8Conv& conv,
                                             const Task& task,
                                             size_t first,
                                             size_t rows,
                                             int8_t* dst) {
  conv.im2col<MaskedBytes>(task, first, rows, dst);
}
#endif

void Qs8Conv::run_rows(void* context, size_t item) {
  const Task& task = *static_cast<const Task*>(context);
  const Qs8Conv& conv = *task.conv;
  const size_t tile_rows = task.tile_rows;
  const size_t first = item / task.channel_parts * tile_rows;
  const size_t rows = std::min(tile_rows, task.rows - first);
  const size_t reduction4 = conv.reduction4_;
  // The tile's rows of the im2col matrix: in the input itself for a full
  // tile of 1x1 windows evenly spaced in it, else copied here (rows past
  // `rows` are zeros the vector kernel computes and does not store).
  alignas(64) int8_t buffer[kTileRows * kMaxReduction];
  size_t stride = reduction4;
  const int8_t* a = conv.tile_in_input(task, first, &stride);
  if (a == nullptr) {
#ifdef ET_QS8_HAVE_VNNI
    if (task.vnni) {
      im2col_vnni(conv, task, first, rows, buffer);
    } else
#endif
    {
      conv.im2col<LibraryBytes>(task, first, rows, buffer);
    }
    std::memset(buffer + rows * reduction4, 0, (tile_rows - rows) * reduction4);
    a = buffer;
    stride = reduction4;
  }
  const size_t channels = conv.shape_.out_channels;
  const size_t begin = item % task.channel_parts * task.part_channels;
  const size_t end = std::min(channels, begin + task.part_channels);
  const size_t block_bytes = reduction4 * kBlock;
  TileArgs t;
  t.a = a;
  t.a_stride = stride;
  t.reduction4 = reduction4;
  t.block_bytes = block_bytes;
  t.requantization = conv.requantization_;
  t.out_stride = channels;
  t.rows = rows;
  if (!task.vnni) {
    t.filter = conv.packed_.data() + (begin / kBlock) * block_bytes;
    t.bias = conv.bias_.data() + begin;
    t.scale = conv.scale_.data() + begin;
    t.out = task.out + first * channels + begin;
    t.channels = end - begin;
    tile_portable(t);
    return;
  }
#ifdef ET_QS8_HAVE_VNNI
  for (size_t n = begin; n < end; n += 2 * kBlock) {
    t.filter = conv.packed_.data() + (n / kBlock) * block_bytes;
    t.bias = conv.bias_.data() + n;
    t.scale = conv.scale_.data() + n;
    t.out = task.out + first * channels + n;
    t.channels = end - n;
    const bool two = end - n > kBlock;
    if (tile_rows == kTileRows) {
      two ? tile_vnni<2, kTileRows>(t) : tile_vnni<1, kTileRows>(t);
    } else {
      two ? tile_vnni<2, kShortTileRows>(t) : tile_vnni<1, kShortTileRows>(t);
    }
  }
#endif
}

double Qs8Conv::cost_ns(size_t batch, size_t out_h, size_t out_w) const {
  // Thread CPU time with VNNI on an AMD EPYC: 0.0047 ns per multiply-add
  // (3x3 64 -> 64 at 56: 585 us), 0.13 ns per output byte (1x1 16 -> 96 at
  // 112: 244 us) and 4 ns per window row copied (MobileNetV2's stem: 245
  // us, 27-long reductions of 9-byte rows).
  const double pixels = double(batch) * out_h * out_w;
  const double copied_rows = pointwise_ ? 0.0 : double(shape_.kernel_h);
  return pixels * (shape_.out_channels * (reduction_ * 0.0047 + 0.13) +
                   copied_rows * 4.0);
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
  const size_t pixels = batch * out_h * out_w;
  Task task{this,
            in,
            in_h,
            in_w,
            out,
            out_h,
            out_w,
            pixels,
            vnni && qs8::vnni_available(),
            1,
            round_up(shape_.out_channels, 2 * kBlock),
            pixels % kTileRows != 0 && pixels % kShortTileRows == 0
                ? kShortTileRows
                : kTileRows};
  const size_t tiles = (task.rows + task.tile_rows - 1) / task.tile_rows;
  // Few tiles (a 7x7 output has 7) leave threads idle while the last ones
  // run: then each tile's channels are split too, so that every thread
  // gets several items. The parts copy their tile's windows each.
  const size_t threads = pthreadpool_get_threads_count(pool);
  if (threads > 1 && tiles > 0 && tiles < 4 * threads) {
    const size_t pairs = task.part_channels / (2 * kBlock);
    const size_t parts = std::min(pairs, (4 * threads + tiles - 1) / tiles);
    task.part_channels = (pairs + parts - 1) / parts * 2 * kBlock;
    task.channel_parts =
        (shape_.out_channels + task.part_channels - 1) / task.part_channels;
  }
  pthreadpool_parallelize_1d(pool,
                             &Qs8Conv::run_rows,
                             &task,
                             tiles * task.channel_parts,
                             /*flags=*/0);
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
