#include <executorch/kernels/optimized/cpu/strided_copy.h>

#include <algorithm>
#include <cstring>

#include <executorch/kernels/portable/util/elementwise.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

using torch::executor::native::kMaxDims;

// Elements per task, as PyTorch's grain size.
constexpr int64_t kGrain = 32768;
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
    const int64_t grain = kGrain * static_cast<int64_t>(element_size);
    ::executorch::extension::parallel_for(
        0, bytes, grain, [&](int64_t begin, int64_t end) {
          std::memcpy(out + begin, in + begin, static_cast<size_t>(end - begin));
        });
    return;
  }
  ::executorch::extension::parallel_for(
      0,
      rows,
      std::max<int64_t>(1, kGrain / std::max<int64_t>(row, 1)),
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
      std::max<int64_t>(1, kGrain / (kTile * kTile)),
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
          for (int64_t a = l0; a < l1; ++a) {
            // Reads along the input's contiguous dim, writes a column.
            const T* src = in + in_offset + a * in_l;
            T* dst = out + out_offset + a;
            for (int64_t b = j0; b < j1; ++b) {
              dst[b * out_j] = src[b];
            }
          }
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

} // namespace optimized
} // namespace kernels
} // namespace executorch
