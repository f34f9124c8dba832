#include <executorch/backends/xnnpack/runtime/qs8_dwconv.h>

#include <algorithm>
#include <cstring>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

// Channels in blocks of kBlock (one 512-bit register of int32 sums); a quad
// is kBlock channels x 4 taps, one register of bytes.
constexpr size_t kBlock = 16;
constexpr size_t kQuadBytes = kBlock * Qs8DwConv::kMaxKernelWidth;
// A tile: up to kTileRows output rows, kTileBlocks channel blocks and as
// many output columns as kScratchBytes of quads hold.
constexpr size_t kTileRows = 8;
constexpr size_t kTileBlocks = 4;
constexpr size_t kScratchBytes = 48 * 1024;

using qs8::round_up;

// What the vector and the portable kernels share: one tile's operands.
struct TileArgs {
  const Qs8ConvShape* shape;
  // The tile's image of the input, [in_h, in_w, channels].
  const int8_t* in;
  size_t in_h, in_w;
  // Output columns [ox0, ox0 + width), channel blocks [block0, block0 +
  // blocks).
  size_t ox0, width, block0, blocks;
  // Weights of block0, then of the next blocks; bias and scale of its
  // first channel.
  const int8_t* filter;
  const int32_t* bias;
  const float* scale;
  uint8_t pad_value;
  qs8::Requantization requantization;
  // The output row's first pixel of column 0; pixels are `channels` apart.
  int8_t* out;
};

// The vector kernel interleaves tiles of 4 whole blocks (64 channels) and
// of 2 (32 channels): a register of quads holds 64 channels of one output
// column, or 32 of each of two columns side by side, in the order byte
// unpacking leaves them (build_quads_vnni). Register q's lane 4 * L + i
// holds channel 16 * (L % blocks) + 4 * q + i of column L / blocks, which
// requantize64's packs put back in order. Other tiles (1 or 3 blocks) are
// gathered a block at a time.
bool interleaved(size_t blocks) {
  return blocks == 4 || blocks == 2;
}
// Output columns one interleaved register holds.
size_t columns_per_register(size_t blocks) {
  return kTileBlocks / blocks;
}
// The tile channel that lane `lane` of register `q` holds.
size_t interleaved_channel(size_t q, size_t lane, size_t blocks) {
  return 16 * ((lane / 4) % blocks) + 4 * q + lane % 4;
}
// Bytes of one input row's quads for the tile: whole registers.
size_t quad_row_bytes(size_t width, size_t blocks) {
  const size_t columns = interleaved(blocks)
                             ? round_up(width, columns_per_register(blocks))
                             : width;
  return columns * blocks * kQuadBytes;
}

// Which input pixel (column) tap `t` of output column `ox` reads; at or past
// in_w for padding (unsigned wrap-around makes the left padding huge).
size_t tap_column(const Qs8ConvShape& s, size_t ox, size_t t) {
  return ox * s.stride_w + t * s.dilation_w - s.pad_left;
}

// The quads of input row `iy` (in_h or more: padding) for the tile's
// columns and blocks: [width][blocks][16 channels][4 taps], unsigned.
void build_quads_portable(const TileArgs& t, size_t iy, uint8_t* quads) {
  const Qs8ConvShape& s = *t.shape;
  const size_t channels = s.in_channels;
  for (size_t x = 0; x < t.width; ++x) {
    for (size_t j = 0; j < t.blocks; ++j) {
      uint8_t* quad = quads + (x * t.blocks + j) * kQuadBytes;
      for (size_t lane = 0; lane < kBlock; ++lane) {
        const size_t c = (t.block0 + j) * kBlock + lane;
        for (size_t tap = 0; tap < Qs8DwConv::kMaxKernelWidth; ++tap) {
          const size_t ix = tap_column(s, t.ox0 + x, tap);
          uint8_t byte = t.pad_value;
          if (tap >= s.kernel_w || c >= channels) {
            byte = 0;
          } else if (iy < t.in_h && ix < t.in_w) {
            byte =
                static_cast<uint8_t>(t.in[(iy * t.in_w + ix) * channels + c]) ^
                0x80;
          }
          quad[lane * Qs8DwConv::kMaxKernelWidth + tap] = byte;
        }
      }
    }
  }
}

// One output row from the quads of its kernel rows (`rows[ky]`).
void row_portable(const TileArgs& t, const uint8_t* const* rows) {
  const Qs8ConvShape& s = *t.shape;
  const size_t channels = s.out_channels;
  for (size_t x = 0; x < t.width; ++x) {
    for (size_t j = 0; j < t.blocks; ++j) {
      for (size_t lane = 0; lane < kBlock; ++lane) {
        const size_t c = (t.block0 + j) * kBlock + lane;
        if (c >= channels) {
          break;
        }
        const size_t k = j * kBlock + lane;
        int32_t acc = t.bias[k];
        for (size_t ky = 0; ky < s.kernel_h; ++ky) {
          const uint8_t* a = rows[ky] + (x * t.blocks + j) * kQuadBytes +
                             lane * Qs8DwConv::kMaxKernelWidth;
          const int8_t* w = t.filter + (j * s.kernel_h + ky) * kQuadBytes +
                            lane * Qs8DwConv::kMaxKernelWidth;
          for (size_t tap = 0; tap < Qs8DwConv::kMaxKernelWidth; ++tap) {
            acc += int32_t(a[tap]) * int32_t(w[tap]);
          }
        }
        t.out[(t.ox0 + x) * channels + c] =
            qs8::requantize(acc, t.scale[k], t.requantization);
      }
    }
  }
}

#ifdef ET_QS8_HAVE_VNNI
// Four taps of 16 channels, tap t in 128-bit lane t, as a quad: lane j
// holds channels 4j..4j+3, each as its 4 taps.
ET_QS8_VNNI_TARGET inline __m512i interleave_taps(__m512i taps) {
  // Lane j gathers dword j of each tap: channels 4j..4j+3 of taps 0..3 ...
  const __m512i dwords =
      _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  // ... and a 4x4 byte transpose in each lane makes the taps adjacent.
  const __m512i bytes = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(dwords, taps), bytes);
}

// The bytes of one output column's channels in a register of an
// interleaved tile (fewer than its 64 or 32 in a last, partial block).
__mmask64 column_mask(const TileArgs& t, size_t channels) {
  return qs8::first_bytes(
      std::min(channels - t.block0 * kBlock, t.blocks * kBlock));
}

ET_QS8_VNNI_TARGET void build_quads_vnni(const TileArgs& t,
                                         size_t iy,
                                         uint8_t* quads) {
  const Qs8ConvShape& s = *t.shape;
  const size_t channels = s.in_channels;
  if (iy >= t.in_h) {
    std::memset(quads, t.pad_value, quad_row_bytes(t.width, t.blocks));
    return;
  }
  // Gathered signed, flipped to unsigned after the interleave.
  const int8_t pad = static_cast<int8_t>(t.pad_value ^ 0x80);
  const __m128i pad_tap = _mm_set1_epi8(pad);
  const __m512i pad_taps = _mm512_set1_epi8(pad);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const int8_t* row = t.in + iy * t.in_w * channels;
  // Tap k of output column x reads pixel[k] (null: padding).
  const auto pixels_of = [&](size_t x, const int8_t** pixel) {
    for (size_t tap = 0; tap < Qs8DwConv::kMaxKernelWidth; ++tap) {
      const size_t ix = tap_column(s, t.ox0 + x, tap);
      pixel[tap] =
          tap < s.kernel_w && ix < t.in_w ? row + ix * channels : nullptr;
    }
  };
  if (interleaved(t.blocks)) {
    // Each tap's 64 bytes (one column's 64 channels, or two columns' 32)
    // interleaved by two rounds of in-lane unpacks (bytes of taps 0/1 and
    // 2/3, then their 16-bit pairs) into four registers of quads: no
    // cross-lane shuffle, which the block-at-a-time gather below needs one
    // of per quad.
    const size_t per_register = columns_per_register(t.blocks);
    const size_t c = t.block0 * kBlock;
    const __mmask64 mask = column_mask(t, channels);
    for (size_t x = 0, r = 0; x < t.width; x += per_register, ++r) {
      const int8_t* pixel[2][Qs8DwConv::kMaxKernelWidth];
      for (size_t j = 0; j < per_register; ++j) {
        // A column past the tile's (odd widths) reads padding.
        if (x + j < t.width) {
          pixels_of(x + j, pixel[j]);
        } else {
          std::fill(pixel[j], pixel[j] + Qs8DwConv::kMaxKernelWidth, nullptr);
        }
      }
      __m512i tap[Qs8DwConv::kMaxKernelWidth];
      for (size_t k = 0; k < Qs8DwConv::kMaxKernelWidth; ++k) {
        if (per_register == 1) {
          tap[k] = pixel[0][k] != nullptr
                       ? _mm512_maskz_loadu_epi8(mask, pixel[0][k] + c)
                       : pad_taps;
        } else {
          const __m256i pad_half = _mm512_castsi512_si256(pad_taps);
          const __m256i lo =
              pixel[0][k] != nullptr
                  ? _mm256_maskz_loadu_epi8(static_cast<__mmask32>(mask),
                                            pixel[0][k] + c)
                  : pad_half;
          const __m256i hi =
              pixel[1][k] != nullptr
                  ? _mm256_maskz_loadu_epi8(static_cast<__mmask32>(mask),
                                            pixel[1][k] + c)
                  : pad_half;
          tap[k] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        }
      }
      const __m512i taps01_lo = _mm512_unpacklo_epi8(tap[0], tap[1]);
      const __m512i taps01_hi = _mm512_unpackhi_epi8(tap[0], tap[1]);
      const __m512i taps23_lo = _mm512_unpacklo_epi8(tap[2], tap[3]);
      const __m512i taps23_hi = _mm512_unpackhi_epi8(tap[2], tap[3]);
      const __m512i quad[kTileBlocks] = {
          _mm512_unpacklo_epi16(taps01_lo, taps23_lo),
          _mm512_unpackhi_epi16(taps01_lo, taps23_lo),
          _mm512_unpacklo_epi16(taps01_hi, taps23_hi),
          _mm512_unpackhi_epi16(taps01_hi, taps23_hi)};
      for (size_t q = 0; q < kTileBlocks; ++q) {
        _mm512_store_si512(quads + (r * kTileBlocks + q) * kQuadBytes,
                           _mm512_xor_si512(quad[q], flip));
      }
    }
    return;
  }
  for (size_t x = 0; x < t.width; ++x) {
    const int8_t* pixel[Qs8DwConv::kMaxKernelWidth];
    pixels_of(x, pixel);
    for (size_t j = 0; j < t.blocks; ++j) {
      const size_t c = (t.block0 + j) * kBlock;
      __m512i taps = pad_taps;
      if (c + kBlock <= channels) {
        // A whole block: each tap's 16 bytes loaded straight into its
        // 128-bit lane (a broadcast load under a lane mask; a partial block
        // below is loaded masked, which the broadcast cannot take from
        // memory). A load and an insert per tap made this function 16% of
        // int8 MobileNetV2's time; its depthwise convolutions take 4-7% less
        // CPU time so.
        for (size_t k = 0; k < Qs8DwConv::kMaxKernelWidth; ++k) {
          if (pixel[k] != nullptr) {
            taps = _mm512_mask_broadcast_i32x4(
                taps,
                static_cast<__mmask16>(0xF << (4 * k)),
                _mm_loadu_si128(
                    reinterpret_cast<const __m128i*>(pixel[k] + c)));
          }
        }
      } else {
        const __mmask16 mask = qs8::first_lanes(channels - c);
        __m128i tap[Qs8DwConv::kMaxKernelWidth];
        for (size_t k = 0; k < Qs8DwConv::kMaxKernelWidth; ++k) {
          tap[k] =
              pixel[k] ? _mm_maskz_loadu_epi8(mask, pixel[k] + c) : pad_tap;
        }
        taps = _mm512_castsi128_si512(tap[0]);
        taps = _mm512_inserti32x4(taps, tap[1], 1);
        taps = _mm512_inserti32x4(taps, tap[2], 2);
        taps = _mm512_inserti32x4(taps, tap[3], 3);
      }
      _mm512_store_si512(quads + (x * t.blocks + j) * kQuadBytes,
                         _mm512_xor_si512(interleave_taps(taps), flip));
    }
  }
}

// kKernelH: the kernel's height when known at compile time (3, the
// MobileNets': its weights and row pointers stay in registers), else 0.
template <size_t kKernelH>
ET_QS8_VNNI_TARGET void row_vnni(const TileArgs& t,
                                 const uint8_t* const* rows) {
  const Qs8ConvShape& s = *t.shape;
  const size_t kernel_h = kKernelH != 0 ? kKernelH : s.kernel_h;
  const size_t channels = s.out_channels;
  const size_t stride = t.blocks * kQuadBytes;
  const qs8::Requantization16 requantization = qs8::broadcast(t.requantization);
  if (interleaved(t.blocks)) {
    // Four registers of quads at once: requantize64 packs their sums back
    // into channel order, 64 channels of one column or 32 of two.
    const size_t per_register = columns_per_register(t.blocks);
    const size_t c = t.block0 * kBlock;
    const __mmask64 mask = column_mask(t, channels);
    __m512 scale[kTileBlocks];
    for (size_t q = 0; q < kTileBlocks; ++q) {
      scale[q] = _mm512_loadu_ps(t.scale + q * kBlock);
    }
    int8_t* out = t.out + t.ox0 * channels + c;
    const size_t registers = (t.width + per_register - 1) / per_register;
    constexpr size_t kSideBySide = 2;
    // Two registers' columns at a time: one register's sums and
    // requantization are a chain of dependent instructions long enough to
    // fill the vector scheduler, and side by side two chains overlap (64
    // channels at 112, AMD Zen 4: 234 -> 194 us; four spill registers,
    // 210 us).
    for (size_t r = 0; r < registers; r += kSideBySide) {
      __m512i acc[kSideBySide][kTileBlocks];
      for (size_t i = 0; i < kSideBySide; ++i) {
        // A lone last register is computed twice and stored once.
        const size_t reg = std::min(r + i, registers - 1);
        for (size_t q = 0; q < kTileBlocks; ++q) {
          acc[i][q] = _mm512_loadu_si512(t.bias + q * kBlock);
          for (size_t ky = 0; ky < kernel_h; ++ky) {
            acc[i][q] = _mm512_dpbusd_epi32(
                acc[i][q],
                _mm512_load_si512(rows[ky] +
                                  (reg * kTileBlocks + q) * kQuadBytes),
                _mm512_loadu_si512(t.filter +
                                   (q * kernel_h + ky) * kQuadBytes));
          }
        }
      }
      for (size_t i = 0; i < kSideBySide && r + i < registers; ++i) {
        const __m512i bytes = qs8::requantize64(acc[i], scale, requantization);
        const size_t x = (r + i) * per_register;
        if (per_register == 1) {
          _mm512_mask_storeu_epi8(out + x * channels, mask, bytes);
          continue;
        }
        const __mmask32 half_mask = static_cast<__mmask32>(mask);
        _mm256_mask_storeu_epi8(
            out + x * channels, half_mask, _mm512_castsi512_si256(bytes));
        if (x + 1 < t.width) {
          _mm256_mask_storeu_epi8(out + (x + 1) * channels,
                                  half_mask,
                                  _mm512_extracti64x4_epi64(bytes, 1));
        }
      }
    }
    return;
  }
  for (size_t j = 0; j < t.blocks; ++j) {
    const size_t c = (t.block0 + j) * kBlock;
    const __mmask16 mask = qs8::first_lanes(std::min(kBlock, channels - c));
    const __m512i bias = _mm512_loadu_si512(t.bias + j * kBlock);
    const __m512 scale = _mm512_loadu_ps(t.scale + j * kBlock);
    __m512i w[Qs8DwConv::kMaxKernelSpan];
    const uint8_t* a[Qs8DwConv::kMaxKernelSpan];
    for (size_t ky = 0; ky < kernel_h; ++ky) {
      w[ky] = _mm512_loadu_si512(t.filter + (j * kernel_h + ky) * kQuadBytes);
      a[ky] = rows[ky] + j * kQuadBytes;
    }
    int8_t* out = t.out + t.ox0 * channels + c;
    for (size_t x = 0; x < t.width; ++x) {
      __m512i acc = bias;
      for (size_t ky = 0; ky < kernel_h; ++ky) {
        acc = _mm512_dpbusd_epi32(
            acc, _mm512_load_si512(a[ky] + x * stride), w[ky]);
      }
      _mm_mask_storeu_epi8(out + x * channels,
                           mask,
                           qs8::requantize16(acc, scale, requantization));
    }
  }
}
#endif

} // namespace

struct Qs8DwConv::Task {
  const Qs8DwConv* conv;
  const int8_t* in;
  size_t in_h, in_w;
  int8_t* out;
  size_t out_h, out_w;
  // Tiles: batch x row tiles x column tiles x block groups.
  size_t row_tiles, columns, column_tiles, groups;
  bool vnni;
};

bool Qs8DwConv::init(const Qs8ConvShape& shape,
                     const Qs8ConvQuant& quant,
                     const int8_t* filter,
                     const int32_t* bias) {
  shape_ = shape;
  const size_t channels = shape.out_channels;
  const size_t span = (shape.kernel_h - 1) * shape.dilation_h + 1;
  if (channels == 0 || shape.in_channels != channels || shape.kernel_h == 0 ||
      shape.kernel_w == 0 || shape.kernel_w > kMaxKernelWidth ||
      shape.dilation_h == 0 || span > kMaxKernelSpan) {
    return false;
  }
  blocks_ = round_up(channels, kBlock) / kBlock;
  packed_.assign(blocks_ * shape.kernel_h * kQuadBytes, 0);
  bias_.assign(blocks_ * kBlock, 0);
  scale_.assign(blocks_ * kBlock, 0.0f);
  const size_t taps = shape.kernel_h * shape.kernel_w;
  for (size_t c = 0; c < channels; ++c) {
    int64_t sum = 0;
    for (size_t ky = 0; ky < shape.kernel_h; ++ky) {
      int8_t* quad = packed_.data() +
                     ((c / kBlock) * shape.kernel_h + ky) * kQuadBytes +
                     (c % kBlock) * kMaxKernelWidth;
      for (size_t kx = 0; kx < shape.kernel_w; ++kx) {
        const int8_t w = filter[(ky * shape.kernel_w + kx) * channels + c];
        quad[kx] = w;
        sum += w;
      }
    }
    if (!qs8::adjusted_bias(quant,
                            bias,
                            c,
                            sum,
                            taps,
                            &bias_[c])) {
      return false;
    }
    scale_[c] = qs8::channel_scale(quant, c);
  }
  // For the vector kernel, the parameters of interleaved tiles again, in
  // their order: per tile, 4 registers of weights per kernel row, 4 of
  // biases and of scales (a 2-block tile's twice over, one per column).
  const size_t tiles = (blocks_ + kTileBlocks - 1) / kTileBlocks;
  if (qs8::vnni_available()) {
    interleaved_packed_.assign(
        tiles * kTileBlocks * shape.kernel_h * kQuadBytes, 0);
    interleaved_bias_.assign(tiles * kTileBlocks * kBlock, 0);
    interleaved_scale_.assign(tiles * kTileBlocks * kBlock, 0.0f);
  }
  for (size_t tile = 0; !interleaved_packed_.empty() && tile < tiles; ++tile) {
    const size_t b0 = tile * kTileBlocks;
    const size_t blocks = std::min(kTileBlocks, blocks_ - b0);
    if (!interleaved(blocks)) {
      continue;
    }
    for (size_t q = 0; q < kTileBlocks; ++q) {
      for (size_t lane = 0; lane < kBlock; ++lane) {
        const size_t to = (b0 + q) * kBlock + lane;
        const size_t from = b0 * kBlock + interleaved_channel(q, lane, blocks);
        interleaved_bias_[to] = bias_[from];
        interleaved_scale_[to] = scale_[from];
        for (size_t ky = 0; ky < shape.kernel_h; ++ky) {
          std::memcpy(interleaved_packed_.data() +
                          ((b0 + q) * shape.kernel_h + ky) * kQuadBytes +
                          lane * kMaxKernelWidth,
                      packed_.data() +
                          ((from / kBlock) * shape.kernel_h + ky) * kQuadBytes +
                          (from % kBlock) * kMaxKernelWidth,
                      kMaxKernelWidth);
        }
      }
    }
  }
  pad_value_ = qs8::pad_byte(quant);
  requantization_ = qs8::Requantization(quant);
  return true;
}

void Qs8DwConv::run_tile(void* context, size_t tile) {
  const Task& task = *static_cast<const Task*>(context);
  const Qs8DwConv& conv = *task.conv;
  const Qs8ConvShape& s = conv.shape_;
  const size_t group = tile % task.groups;
  size_t rest = tile / task.groups;
  const size_t column_tile = rest % task.column_tiles;
  rest /= task.column_tiles;
  const size_t row_tile = rest % task.row_tiles;
  const size_t b = rest / task.row_tiles;

  TileArgs t;
  t.shape = &s;
  t.in = task.in + b * task.in_h * task.in_w * s.in_channels;
  t.in_h = task.in_h;
  t.in_w = task.in_w;
  t.ox0 = column_tile * task.columns;
  t.width = std::min(task.columns, task.out_w - t.ox0);
  t.block0 = group * kTileBlocks;
  t.blocks = std::min(kTileBlocks, conv.blocks_ - t.block0);
  // The vector kernel reads interleaved tiles' parameters in their order.
  const bool in_order = !(task.vnni && interleaved(t.blocks));
  t.filter = (in_order ? conv.packed_ : conv.interleaved_packed_).data() +
             t.block0 * s.kernel_h * kQuadBytes;
  t.bias = (in_order ? conv.bias_ : conv.interleaved_bias_).data() +
           t.block0 * kBlock;
  t.scale = (in_order ? conv.scale_ : conv.interleaved_scale_).data() +
            t.block0 * kBlock;
  t.pad_value = conv.pad_value_;
  t.requantization = conv.requantization_;

  // The quads of the last `span` input rows (padded row index p in slot
  // p % span): the rows of one output row's window never share a slot.
  const size_t span = (s.kernel_h - 1) * s.dilation_h + 1;
  const size_t slot_bytes = quad_row_bytes(t.width, t.blocks);
  alignas(64) uint8_t quads[kScratchBytes];
  size_t slot_row[kMaxKernelSpan];
  std::fill(slot_row, slot_row + span, SIZE_MAX);
  const uint8_t* rows[kMaxKernelSpan];
  const size_t first = row_tile * kTileRows;
  const size_t last = std::min(first + kTileRows, task.out_h);
  for (size_t oy = first; oy < last; ++oy) {
    for (size_t ky = 0; ky < s.kernel_h; ++ky) {
      const size_t p = oy * s.stride_h + ky * s.dilation_h;
      const size_t slot = p % span;
      uint8_t* dst = quads + slot * slot_bytes;
      if (slot_row[slot] != p) {
        // Past in_h (or wrapped around, in the top padding): padding.
        const size_t iy = p - s.pad_top;
#ifdef ET_QS8_HAVE_VNNI
        if (task.vnni) {
          build_quads_vnni(t, iy, dst);
        } else
#endif
        {
          build_quads_portable(t, iy, dst);
        }
        slot_row[slot] = p;
      }
      rows[ky] = dst;
    }
    t.out = task.out + ((b * task.out_h + oy) * task.out_w) * s.out_channels;
#ifdef ET_QS8_HAVE_VNNI
    if (task.vnni) {
      if (s.kernel_h == 3) {
        row_vnni<3>(t, rows);
      } else {
        row_vnni<0>(t, rows);
      }
      continue;
    }
#endif
    row_portable(t, rows);
  }
}

double Qs8DwConv::cost_ns(
    size_t batch, size_t in_h, size_t in_w, size_t out_h, size_t out_w) const {
  // Thread CPU time with VNNI on an AMD EPYC: 0.026 ns per multiply-add
  // (3x3 at stride 1 over 960 channels at 7: 13 us) and 0.036 ns per input
  // byte (3x3 at stride 2 over 96 channels at 112: 123 us).
  const double channels = shape_.out_channels;
  return double(batch) * channels *
         (double(out_h) * out_w * shape_.kernel_h * shape_.kernel_w * 0.026 +
          double(in_h) * in_w * 0.036);
}

void Qs8DwConv::run(const int8_t* in,
                    size_t batch,
                    size_t in_h,
                    size_t in_w,
                    int8_t* out,
                    size_t out_h,
                    size_t out_w,
                    pthreadpool_t pool,
                    bool vnni) const {
  if (batch == 0 || out_h == 0 || out_w == 0) {
    return;
  }
  const size_t span = (shape_.kernel_h - 1) * shape_.dilation_h + 1;
  const size_t tile_blocks = std::min(kTileBlocks, blocks_);
  Task task;
  task.conv = this;
  task.in = in;
  task.in_h = in_h;
  task.in_w = in_w;
  task.out = out;
  task.out_h = out_h;
  task.out_w = out_w;
  task.row_tiles = (out_h + kTileRows - 1) / kTileRows;
  // An even count, so a tile of two-column registers fits too.
  task.columns = std::min(
      out_w, (kScratchBytes / (span * tile_blocks * kQuadBytes)) & ~size_t{1});
  task.column_tiles = (out_w + task.columns - 1) / task.columns;
  task.groups = (blocks_ + kTileBlocks - 1) / kTileBlocks;
  task.vnni = vnni && qs8::vnni_available();
  const size_t tiles = batch * task.row_tiles * task.column_tiles * task.groups;
  pthreadpool_parallelize_1d(
      pool, &Qs8DwConv::run_tile, &task, tiles, /*flags=*/0);
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
