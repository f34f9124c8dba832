#include <executorch/backends/xnnpack/runtime/host_util.h>

#include <cstring>

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
#include <executorch/kernels/optimized/cpu/strided_copy.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

// Trailing dims of a Dims, viewed in place: gather's tasks share the
// caller's dims instead of copying them (a heap allocation per call).
struct DimsView {
  const size_t* data;
  size_t rank;
  size_t size() const {
    return rank;
  }
  size_t operator[](size_t i) const {
    return data[i];
  }
};

size_t product(DimsView dims, size_t begin, size_t end) {
  size_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    p *= dims[i];
  }
  return p;
}

// One thread's part of gather(): the slab at index i of the split dim.
struct GatherTask {
  const uint8_t* in;
  size_t base;
  size_t split_step;
  // Steps and sizes of the dims after the split one.
  const size_t* step;
  DimsView dims;
  size_t slab;
  size_t element_size;
  uint8_t* out;
};

// Element o + j of out = element offset + j * step of in, for j < count,
// elements of sizeof(T) bytes: a fixed-size copy compiles to one move,
// where a memcpy call per element dominated strided transposes.
template <typename T>
void copy_strided(const uint8_t* in,
                  size_t offset,
                  size_t step,
                  size_t count,
                  uint8_t* out,
                  size_t o) {
  const uint8_t* src = in + offset * sizeof(T);
  uint8_t* dst = out + o * sizeof(T);
  for (size_t j = 0; j < count; ++j) {
    std::memcpy(dst + j * sizeof(T), src + j * step * sizeof(T), sizeof(T));
  }
}

// Calls f(o, offset) for each run of the last `tail` dims of `out_dims` in
// the output: o, the run's first output element, and offset, the input
// element at the same index (base plus the steps of the dims before the
// run), advancing the outer index like an odometer.
template <typename F>
void for_each_run(
    size_t base, const size_t* step, DimsView out_dims, size_t tail, F f) {
  const size_t rank = out_dims.size();
  const size_t outer = rank - tail;
  const size_t run = product(out_dims, outer, rank);
  const size_t numel = product(out_dims, 0, rank);
  size_t index[kMaxDims] = {};
  size_t offset = base;
  for (size_t o = 0; o < numel; o += run) {
    f(o, offset);
    for (size_t d = outer; d-- > 0;) {
      offset += step[d];
      if (++index[d] < out_dims[d]) {
        break;
      }
      offset -= step[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

// Calls f(T{}) with T the unsigned integer of element_size bytes (1, 2 or
// 4), so a copy moves whole elements; false for other sizes.
template <typename F>
bool with_element_type(size_t element_size, F f) {
  switch (element_size) {
    case 4:
      f(uint32_t{});
      return true;
    case 2:
      f(uint16_t{});
      return true;
    case 1:
      f(uint8_t{});
      return true;
    default:
      return false;
  }
}

// Output elements o + i * columns + j = input element offset + i + j *
// column_step, for i < rows and j < columns, elements of sizeof(T) bytes:
// each input row read in turn and written to every `columns`-th element.
template <typename T>
void transpose_run(const uint8_t* in,
                   size_t offset,
                   size_t rows,
                   size_t columns,
                   size_t column_step,
                   uint8_t* out,
                   size_t o) {
  for (size_t j = 0; j < columns; ++j) {
    const uint8_t* src = in + (offset + j * column_step) * sizeof(T);
    uint8_t* dst = out + (o + j) * sizeof(T);
    for (size_t i = 0; i < rows; ++i) {
      std::memcpy(
          dst + i * columns * sizeof(T), src + i * sizeof(T), sizeof(T));
    }
  }
}

// The last two output dims as a transpose of input rows when the input's
// contiguous dim is the output's second to last (NCHW to NHWC: rows of W,
// a few columns of C): reading the short output rows element by element
// with a stride, one odometer step each, took 4.4% of int8 MobileNetV2's
// time in its input's transpose. False for other layouts.
bool gather_transposed(const uint8_t* in,
                       size_t base,
                       const size_t* step,
                       DimsView out_dims,
                       size_t element_size,
                       uint8_t* out) {
  const size_t rank = out_dims.size();
  if (rank < 2 || step[rank - 2] != 1 || step[rank - 1] == 1) {
    return false;
  }
  const size_t rows = out_dims[rank - 2];
  const size_t columns = out_dims[rank - 1];
  const size_t column_step = step[rank - 1];
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
  // Floats in 4 x 4 blocks in SIMD registers: an attention's K^T ([3, 197,
  // 64] to [3, 64, 197]) took 37 us element by element, 4 GB/s.
  if (element_size == 4) {
    for_each_run(base, step, out_dims, 2, [&](size_t o, size_t offset) {
      kernels::optimized::transpose_floats(
          reinterpret_cast<const float*>(in) + offset,
          static_cast<int64_t>(column_step),
          static_cast<int64_t>(columns),
          static_cast<int64_t>(rows),
          reinterpret_cast<float*>(out) + o,
          static_cast<int64_t>(columns));
    });
    return true;
  }
#endif
  return with_element_type(element_size, [&](auto zero) {
    for_each_run(base, step, out_dims, 2, [&](size_t o, size_t offset) {
      transpose_run<decltype(zero)>(
          in, offset, rows, columns, column_step, out, o);
    });
  });
}

void gather_serial(const uint8_t* in,
                   size_t base,
                   const size_t* step,
                   DimsView out_dims,
                   size_t element_size,
                   uint8_t* out) {
  const size_t rank = out_dims.size();
  const size_t numel = product(out_dims, 0, rank);
  if (rank == 0 || numel == 0) {
    std::memcpy(out, in + base * element_size, numel * element_size);
    return;
  }
  if (gather_transposed(in, base, step, out_dims, element_size, out)) {
    return;
  }
  const size_t inner = out_dims[rank - 1];
  const size_t inner_step = step[rank - 1];
  for_each_run(base, step, out_dims, 1, [&](size_t o, size_t offset) {
    if (inner_step == 1) {
      std::memcpy(out + o * element_size,
                  in + offset * element_size,
                  inner * element_size);
      return;
    }
    const bool typed = with_element_type(element_size, [&](auto zero) {
      copy_strided<decltype(zero)>(in, offset, inner_step, inner, out, o);
    });
    if (!typed) {
      for (size_t j = 0; j < inner; ++j) {
        std::memcpy(out + (o + j) * element_size,
                    in + (offset + j * inner_step) * element_size,
                    element_size);
      }
    }
  });
}

void gather_slab(void* context, size_t i) {
  const auto* t = static_cast<const GatherTask*>(context);
  gather_serial(t->in,
                t->base + i * t->split_step,
                t->step,
                t->dims,
                t->element_size,
                t->out + i * t->slab * t->element_size);
}

} // namespace

size_t product(const Dims& dims, size_t begin, size_t end) {
  return product(DimsView{dims.data(), dims.size()}, begin, end);
}

void row_major_strides(const Dims& dims, size_t* strides) {
  size_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
}

void gather(const void* in,
            size_t base,
            const size_t* step,
            const Dims& out_dims,
            size_t element_size,
            void* out,
            pthreadpool_t pool) {
  const auto* src = static_cast<const uint8_t*>(in);
  auto* dst = static_cast<uint8_t*>(out);
  // Leading size-1 dims select nothing; split the first larger one.
  size_t d = 0;
  while (d + 1 < out_dims.size() && out_dims[d] == 1) {
    ++d;
  }
  if (d + 1 >= out_dims.size()) {
    gather_serial(src,
                  base,
                  step,
                  DimsView{out_dims.data(), out_dims.size()},
                  element_size,
                  dst);
    return;
  }
  GatherTask task{src,
                  base,
                  step[d],
                  step + d + 1,
                  DimsView{out_dims.data() + d + 1, out_dims.size() - d - 1},
                  product(out_dims, d + 1, out_dims.size()),
                  element_size,
                  dst};
  pthreadpool_parallelize_1d(
      pool_for(
          task.slab * out_dims[d] * element_size, kMinParallelCopyBytes, pool),
      gather_slab,
      &task,
      out_dims[d],
      /*flags=*/0);
}

void map_elements(UnaryFunction f,
                  const float* in,
                  float* out,
                  size_t n,
                  pthreadpool_t pool) {
  auto tile = [&](size_t start, size_t count) {
    for (size_t i = start; i < start + count; ++i) {
      out[i] = f(in[i]);
    }
  };
  parallelize_tiles(
      pool_for(n, kMinParallelElements, pool), n, kElementTile, tile);
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
