#include <executorch/backends/xnnpack/runtime/host_ops.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <xnnpack.h>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

using Dims = std::vector<size_t>;
using xnnpack_graph::NodeKind;

size_t product(const Dims& dims, size_t begin, size_t end) {
  size_t p = 1;
  for (size_t i = begin; i < end; ++i) {
    p *= dims[i];
  }
  return p;
}

// Work smaller than this runs on the calling thread (a null pool):
// dispatching to the pool's workers costs a wake-up and a barrier, which is
// more than a few microseconds of work saves, and on a machine with more
// runnable threads than cores each barrier can wait a scheduler time slice.
constexpr size_t kMinParallelElements = size_t{1} << 15; // memory-bound ops
constexpr size_t kMinParallelMacs = size_t{1} << 20;     // matrix products

pthreadpool_t pool_for(size_t work, size_t min_work, pthreadpool_t pool) {
  return work < min_work ? nullptr : pool;
}

void row_major_strides(const Dims& dims, size_t* strides) {
  size_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
}

// Writes the contiguous tensor `out` of `out_dims` whose element at index
// (i0, ..., ir) is in[base + sum(ik * step[k])]. Transpose and slice are both
// such a walk: a transpose permutes the input strides, a slice starts at an
// offset and keeps them.
void gather_strided(const float* in,
                    size_t base,
                    const size_t* step,
                    const Dims& out_dims,
                    float* out) {
  const size_t rank = out_dims.size();
  const size_t numel = product(out_dims, 0, rank);
  if (rank == 0 || numel == 0) {
    std::memcpy(out, in + base, numel * sizeof(float));
    return;
  }
  const size_t inner = out_dims[rank - 1];
  const size_t inner_step = step[rank - 1];
  size_t index[kMaxDims] = {};
  size_t offset = base;
  for (size_t o = 0; o < numel; o += inner) {
    if (inner_step == 1) {
      std::memcpy(out + o, in + offset, inner * sizeof(float));
    } else {
      for (size_t j = 0; j < inner; ++j) {
        out[o + j] = in[offset + j * inner_step];
      }
    }
    // Advances the outer index like an odometer.
    for (size_t d = rank - 1; d-- > 0;) {
      offset += step[d];
      if (++index[d] < out_dims[d]) {
        break;
      }
      offset -= step[d] * out_dims[d];
      index[d] = 0;
    }
  }
}

struct GatherTask {
  const float* in;
  size_t base;
  // Step of the split dim, then of the dims after it.
  size_t split_step;
  const size_t* step;
  Dims dims;
  size_t slab;
  float* out;
};

void gather_slab(void* context, size_t i) {
  const auto* t = static_cast<const GatherTask*>(context);
  gather_strided(t->in,
                 t->base + i * t->split_step,
                 t->step,
                 t->dims,
                 t->out + i * t->slab);
}

// gather_strided with the first output dim larger than 1 split across the
// pool (leading size-1 dims select nothing).
void parallel_gather(const float* in,
                     size_t base,
                     const size_t* step,
                     const Dims& out_dims,
                     float* out,
                     pthreadpool_t pool) {
  size_t d = 0;
  while (d + 1 < out_dims.size() && out_dims[d] == 1) {
    ++d;
  }
  if (d + 1 >= out_dims.size()) {
    gather_strided(in, base, step, out_dims, out);
    return;
  }
  GatherTask task{in,
                  base,
                  step[d],
                  step + d + 1,
                  Dims(out_dims.begin() + d + 1, out_dims.end()),
                  product(out_dims, d + 1, out_dims.size()),
                  out};
  pthreadpool_parallelize_1d(
      pool_for(task.slab * out_dims[d], kMinParallelElements, pool),
      gather_slab,
      &task,
      out_dims[d],
      0);
}

struct ElementwiseTask {
  const float* in;
  float* out;
};

template <float (*F)(float)>
void elementwise_tile(void* context, size_t start, size_t count) {
  const auto* t = static_cast<const ElementwiseTask*>(context);
  for (size_t i = start; i < start + count; ++i) {
    t->out[i] = F(t->in[i]);
  }
}

// Elements per task: large enough to amortize scheduling.
constexpr size_t kElementwiseTile = 4096;

template <float (*F)(float)>
void elementwise(const float* in, float* out, size_t n, pthreadpool_t pool) {
  ElementwiseTask task{in, out};
  pthreadpool_parallelize_1d_tile_1d(pool_for(n, kMinParallelElements, pool),
                                     elementwise_tile<F>,
                                     &task,
                                     n,
                                     kElementwiseTile,
                                     0);
}

float tanh_f32(float x) {
  return std::tanh(x);
}

float gelu_erf_f32(float x) {
  return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2)));
}

float gelu_tanh_f32(float x) {
  const float k = std::sqrt(2.0f / static_cast<float>(M_PI));
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

void concatenate(const xnnpack_graph::Node* node,
                 const CheckedGraph& graph,
                 void* const* data,
                 float* out) {
  const size_t axis = node->params_as_ConcatenateParams()->axis();
  const Dims& out_dims = graph.values[node->outputs()->Get(0)].dims;
  const size_t outer = product(out_dims, 0, axis);
  const auto* inputs = node->inputs();
  for (size_t o = 0; o < outer; ++o) {
    for (uint32_t v : *inputs) {
      const Dims& dims = graph.values[v].dims;
      const size_t chunk = product(dims, axis, dims.size());
      std::memcpy(out,
                  static_cast<const float*>(data[v]) + o * chunk,
                  chunk * sizeof(float));
      out += chunk;
    }
  }
}

// out[p] = a[p] @ b[p] for each batch p, with XNNPACK's fully connected
// operator: b[p] ([K, N]) is its transposed weight. Debian's XNNPACK has no
// batch matmul node and packs weights when the operator is created, so
// dynamic right operands mean one operator per batch and call.
runtime::Error batch_matmul(const float* a,
                            const float* b,
                            float* out,
                            size_t batch,
                            size_t m,
                            size_t k,
                            size_t n,
                            pthreadpool_t pool) {
  pool = pool_for(m * k * n, kMinParallelMacs, pool);
  for (size_t p = 0; p < batch; ++p) {
    xnn_operator_t op = nullptr;
    xnn_status status = xnn_create_fully_connected_nc_f32(
        k,
        n,
        k,
        n,
        b + p * k * n,
        /*bias=*/nullptr,
        -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::infinity(),
        XNN_FLAG_TRANSPOSE_WEIGHTS,
        &op);
    if (status == xnn_status_success) {
      status = xnn_setup_fully_connected_nc_f32(
          op, m, a + p * m * k, out + p * m * n, pool);
    }
    if (status == xnn_status_success) {
      status = xnn_run_operator(op, pool);
    }
    xnn_delete_operator(op);
    ET_CHECK_OR_RETURN_ERROR(status == xnn_status_success,
                             Internal,
                             "XNNPACK batch matmul %zu of [%zu, %zu] x [%zu, "
                             "%zu] failed (status %d)",
                             p,
                             m,
                             k,
                             k,
                             n,
                             static_cast<int>(status));
  }
  return runtime::Error::Ok;
}

struct LayerNormTask {
  const float* in;
  const float* weight;
  const float* bias;
  float* out;
  size_t inner;
  float epsilon;
};

// One row; two passes (mean, then variance about it) for accuracy.
void layer_norm_row(void* context, size_t row) {
  const auto* t = static_cast<const LayerNormTask*>(context);
  const float* x = t->in + row * t->inner;
  float* y = t->out + row * t->inner;
  float sum = 0.0f;
  for (size_t i = 0; i < t->inner; ++i) {
    sum += x[i];
  }
  const float mean = sum / static_cast<float>(t->inner);
  float squares = 0.0f;
  for (size_t i = 0; i < t->inner; ++i) {
    squares += (x[i] - mean) * (x[i] - mean);
  }
  const float scale =
      1.0f / std::sqrt(squares / static_cast<float>(t->inner) + t->epsilon);
  for (size_t i = 0; i < t->inner; ++i) {
    float v = (x[i] - mean) * scale;
    if (t->weight != nullptr) {
      v *= t->weight[i];
    }
    if (t->bias != nullptr) {
      v += t->bias[i];
    }
    y[i] = v;
  }
}

struct SoftmaxTask {
  const float* in;
  float* out;
  size_t inner;
};

// One row of a softmax whose all -inf rows give zeros (their max is -inf,
// and exp(x - max) would be NaN).
void safe_softmax_row(void* context, size_t row) {
  const auto* t = static_cast<const SoftmaxTask*>(context);
  const float* x = t->in + row * t->inner;
  float* y = t->out + row * t->inner;
  float max = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < t->inner; ++i) {
    max = std::max(max, x[i]);
  }
  if (max == -std::numeric_limits<float>::infinity()) {
    std::fill(y, y + t->inner, 0.0f);
    return;
  }
  float sum = 0.0f;
  for (size_t i = 0; i < t->inner; ++i) {
    y[i] = std::exp(x[i] - max);
    sum += y[i];
  }
  for (size_t i = 0; i < t->inner; ++i) {
    y[i] /= sum;
  }
}

} // namespace

runtime::Error run_host_node(const xnnpack_graph::Node* node,
                             const CheckedGraph& graph,
                             void* const* data,
                             pthreadpool_t pool) {
  const uint32_t in_id = node->inputs()->Get(0);
  const ValueInfo& in_info = graph.values[in_id];
  const auto* in = static_cast<const float*>(data[in_id]);
  const ValueInfo& out_info = graph.values[node->outputs()->Get(0)];
  auto* out = static_cast<float*>(data[node->outputs()->Get(0)]);
  const size_t numel = out_info.numel;
  size_t strides[kMaxDims];
  row_major_strides(in_info.dims, strides);
  switch (node->kind()) {
    case NodeKind::static_transpose: {
      const auto* perm = node->params_as_TransposeParams()->perm();
      size_t step[kMaxDims];
      for (size_t i = 0; i < perm->size(); ++i) {
        step[i] = strides[perm->Get(i)];
      }
      parallel_gather(in, 0, step, out_info.dims, out, pool);
      break;
    }
    case NodeKind::static_slice: {
      const auto* params = node->params_as_SliceParams();
      size_t base = 0;
      for (size_t i = 0; i < in_info.dims.size(); ++i) {
        uint64_t offset = 0, size = 0;
        // The checks accepted the window at the input's current dims.
        (void)slice_window(params, i, in_info.dims[i], &offset, &size);
        base += offset * strides[i];
      }
      parallel_gather(in, base, strides, out_info.dims, out, pool);
      break;
    }
    case NodeKind::concatenate:
      concatenate(node, graph, data, out);
      break;
    case NodeKind::tanh:
      elementwise<tanh_f32>(in, out, numel, pool);
      break;
    case NodeKind::gelu:
      if (node->params_as_GeluParams()->tanh_approximation()) {
        elementwise<gelu_tanh_f32>(in, out, numel, pool);
      } else {
        elementwise<gelu_erf_f32>(in, out, numel, pool);
      }
      break;
    case NodeKind::batch_matrix_multiply: {
      const Dims& a_dims = in_info.dims;
      const size_t m = a_dims[a_dims.size() - 2];
      return batch_matmul(
          in,
          static_cast<const float*>(data[node->inputs()->Get(1)]),
          out,
          product(a_dims, 0, a_dims.size() - 2),
          m,
          a_dims.back(),
          out_info.dims.back(),
          pool);
    }
    case NodeKind::layer_norm: {
      const auto* inputs = node->inputs();
      const auto* p = node->params_as_LayerNormParams();
      const size_t rank = in_info.dims.size();
      const size_t inner =
          product(in_info.dims, rank - p->normalized_dims(), rank);
      LayerNormTask task{
          in,
          inputs->size() > 1 ? static_cast<const float*>(data[inputs->Get(1)])
                             : nullptr,
          inputs->size() > 2 ? static_cast<const float*>(data[inputs->Get(2)])
                             : nullptr,
          out,
          inner,
          p->epsilon()};
      if (inner > 0) {
        pthreadpool_parallelize_1d(pool_for(numel, kMinParallelElements, pool),
                                   layer_norm_row,
                                   &task,
                                   numel / inner,
                                   0);
      }
      break;
    }
    case NodeKind::safe_softmax: {
      SoftmaxTask task{in, out, in_info.dims.back()};
      if (task.inner > 0) {
        pthreadpool_parallelize_1d(pool_for(numel, kMinParallelElements, pool),
                                   safe_softmax_row,
                                   &task,
                                   numel / task.inner,
                                   0);
      }
      break;
    }
    default:
      // check_graph() and node_traits() admit no other host kind.
      return runtime::Error::Internal;
  }
  return runtime::Error::Ok;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
