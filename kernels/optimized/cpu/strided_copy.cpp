#include <executorch/kernels/optimized/cpu/strided_copy.h>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/portable/util/elementwise.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

using torch::executor::native::kMaxDims;

// Tile edge of the transposing copy: a 32 x 32 tile of 8-byte elements is
// 8 KiB read and 8 KiB written, well inside L1.
constexpr int64_t kTile = 32;

// The element offsets in `in` and `out` of row-major index `index` over
// dims [0, rank) of `sizes`, skipping dims `skip_a` and `skip_b`.
void offsets_of(int64_t index,
                const int64_t* sizes,
                const int64_t* in_strides,
                const int64_t* out_strides,
                size_t rank,
                size_t skip_a,
                size_t skip_b,
                int64_t* in_offset,
                int64_t* out_offset) {
  *in_offset = 0;
  *out_offset = 0;
  for (size_t d = rank; d-- > 0;) {
    if (d == skip_a || d == skip_b) {
      continue;
    }
    const int64_t i = index % sizes[d];
    index /= sizes[d];
    *in_offset += i * in_strides[d];
    *out_offset += i * out_strides[d];
  }
}

// The innermost dim is contiguous in both: one memcpy per row.
void copy_rows(const char* in,
               char* out,
               const int64_t* sizes,
               const int64_t* in_strides,
               const int64_t* out_strides,
               size_t rank,
               size_t element_size) {
  const int64_t row = sizes[rank - 1];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) {
    rows *= sizes[d];
  }
  const size_t row_bytes = static_cast<size_t>(row) * element_size;
  if (rows == 1) {
    // One long run (a dense copy): in pieces, one per task.
    const int64_t bytes = static_cast<int64_t>(row_bytes);
    ::executorch::extension::parallel_for(
        0, bytes, kCopyGrainBytes, [&](int64_t begin, int64_t end) {
          std::memcpy(
              out + begin, in + begin, static_cast<size_t>(end - begin));
        });
    return;
  }
  ::executorch::extension::parallel_for(
      0,
      rows,
      std::max<int64_t>(
          1,
          kCopyGrainBytes /
              std::max<int64_t>(static_cast<int64_t>(row_bytes), 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t in_offset = 0;
          int64_t out_offset = 0;
          offsets_of(r,
                     sizes,
                     in_strides,
                     out_strides,
                     rank - 1,
                     kMaxDims,
                     kMaxDims,
                     &in_offset,
                     &out_offset);
          std::memcpy(out + out_offset * static_cast<int64_t>(element_size),
                      in + in_offset * static_cast<int64_t>(element_size),
                      row_bytes);
        }
      });
}

// out[b * out_j + a] = in[a * in_l + b] for a in [a0, a1), b in [b0, b1):
// one tile of a transposing copy. Reads along the input's contiguous dim,
// writes along the output's.
template <typename T>
void transpose_tile(const T* in,
                    int64_t in_l,
                    T* out,
                    int64_t out_j,
                    int64_t a0,
                    int64_t a1,
                    int64_t b0,
                    int64_t b1) {
  int64_t a = a0;
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 4) {
    // 4 x 4 blocks transposed in registers: four loads and four stores of
    // 16 bytes instead of sixteen scattered element stores.
    for (; a + 4 <= a1; a += 4) {
      int64_t b = b0;
      for (; b + 4 <= b1; b += 4) {
        const T* src = in + a * in_l + b;
        __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(src));
        __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(src + in_l));
        __m128 r2 =
            _mm_loadu_ps(reinterpret_cast<const float*>(src + 2 * in_l));
        __m128 r3 =
            _mm_loadu_ps(reinterpret_cast<const float*>(src + 3 * in_l));
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        T* dst = out + b * out_j + a;
        _mm_storeu_ps(reinterpret_cast<float*>(dst), r0);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + out_j), r1);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + 2 * out_j), r2);
        _mm_storeu_ps(reinterpret_cast<float*>(dst + 3 * out_j), r3);
      }
      for (; b < b1; ++b) {
        for (int64_t i = 0; i < 4; ++i) {
          out[b * out_j + a + i] = in[(a + i) * in_l + b];
        }
      }
    }
  }
#endif
  for (; a < a1; ++a) {
    const T* src = in + a * in_l;
    T* dst = out + a;
    for (int64_t b = b0; b < b1; ++b) {
      dst[b * out_j] = src[b];
    }
  }
}

// Dim `j` is contiguous in the input, the last dim `l` in the output: tiles
// of kTile x kTile over (j, l), for every index of the other dims.
template <typename T>
void copy_tiles(const T* in,
                T* out,
                const int64_t* sizes,
                const int64_t* in_strides,
                const int64_t* out_strides,
                size_t rank,
                size_t j) {
  const size_t l = rank - 1;
  const int64_t j_tiles = (sizes[j] + kTile - 1) / kTile;
  const int64_t l_tiles = (sizes[l] + kTile - 1) / kTile;
  int64_t outer = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (d != j && d != l) {
      outer *= sizes[d];
    }
  }
  const int64_t in_l = in_strides[l];
  const int64_t out_j = out_strides[j];
  ::executorch::extension::parallel_for(
      0,
      outer * j_tiles * l_tiles,
      std::max<int64_t>(
          1,
          kCopyGrainBytes / (kTile * kTile * static_cast<int64_t>(sizeof(T)))),
      [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
          const int64_t lt = u % l_tiles;
          const int64_t jt = (u / l_tiles) % j_tiles;
          int64_t in_offset = 0;
          int64_t out_offset = 0;
          offsets_of(u / (l_tiles * j_tiles),
                     sizes,
                     in_strides,
                     out_strides,
                     rank,
                     j,
                     l,
                     &in_offset,
                     &out_offset);
          const int64_t j0 = jt * kTile;
          const int64_t j1 = std::min(sizes[j], j0 + kTile);
          const int64_t l0 = lt * kTile;
          const int64_t l1 = std::min(sizes[l], l0 + kTile);
          transpose_tile(in + in_offset,
                         in_l,
                         out + out_offset,
                         out_j,
                         l0,
                         l1,
                         j0,
                         j1);
        }
      });
}

template <typename T>
bool copy_typed(const void* in,
                int64_t* in_strides,
                int64_t* sizes,
                size_t rank,
                void* out) {
  int64_t out_strides[kMaxDims];
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    out_strides[d] = stride;
    stride *= sizes[d];
  }
  int64_t* strides[2] = {in_strides, out_strides};
  rank = torch::executor::native::internal::coalesce(sizes, rank, strides, 2);
  if (rank == 0) {
    std::memcpy(out, in, sizeof(T));
    return true;
  }
  if (in_strides[rank - 1] == 1) {
    copy_rows(static_cast<const char*>(in),
              static_cast<char*>(out),
              sizes,
              in_strides,
              out_strides,
              rank,
              sizeof(T));
    return true;
  }
  for (size_t j = 0; j + 1 < rank; ++j) {
    if (in_strides[j] == 1) {
      copy_tiles(static_cast<const T*>(in),
                 static_cast<T*>(out),
                 sizes,
                 in_strides,
                 out_strides,
                 rank,
                 j);
      return true;
    }
  }
  return false;
}

} // namespace

bool copy_strided_to_contiguous(const void* in,
                                const int64_t* in_strides,
                                const int64_t* sizes,
                                size_t rank,
                                size_t element_size,
                                void* out) {
  if (rank > kMaxDims) {
    return false;
  }
  int64_t s[kMaxDims];
  int64_t st[kMaxDims];
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) {
      return true;
    }
    s[d] = sizes[d];
    st[d] = in_strides[d];
  }
  switch (element_size) {
    case 1:
      return copy_typed<uint8_t>(in, st, s, rank, out);
    case 2:
      return copy_typed<uint16_t>(in, st, s, rank, out);
    case 4:
      return copy_typed<uint32_t>(in, st, s, rank, out);
    case 8:
      return copy_typed<uint64_t>(in, st, s, rank, out);
    default:
      return false;
  }
}

void copy_every_other_float(const float* src, int64_t n, float* dst) {
  int64_t i = 0;
#if defined(__SSE2__)
  // Loads src[2i, 2i + 8): the last of them, 2i + 7 <= 2n - 2.
  for (; i + 5 <= n; i += 4) {
    const __m128 lo = _mm_loadu_ps(src + 2 * i);
    const __m128 hi = _mm_loadu_ps(src + 2 * i + 4);
    _mm_storeu_ps(dst + i, _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  }
#endif
  for (; i < n; ++i) {
    dst[i] = src[2 * i];
  }
}

void transpose_floats(const float* in,
                      int64_t in_stride,
                      int64_t rows,
                      int64_t cols,
                      float* out,
                      int64_t out_stride) {
  transpose_tile(reinterpret_cast<const uint32_t*>(in),
                 in_stride,
                 reinterpret_cast<uint32_t*>(out),
                 out_stride,
                 0,
                 rows,
                 0,
                 cols);
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
