// Matrix products: fully connected layers (constant weights, packed by
// XNNPACK when a runtime is created) and batch matrix multiply of two
// computed operands, which Debian's 2022 XNNPACK has no subgraph node for:
// it runs on the host, on the optimized kernels' GEMM when they are built
// (else XNNPACK's fully connected operator per batch).

#include <atomic>
#include <limits>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/threadpool_guard.h>
#endif
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

namespace {

Error read_fully_connected(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::XNNFullyConnected*>(table);
  node->inputs = {t->input1_id(), t->filter_id(), t->bias_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

// Input [..., K]; filter [N, K], or [K, N] with XNN_FLAG_TRANSPOSE_WEIGHTS;
// output [..., N].
Error infer_fully_connected(const NodeCheck& check, Dims* outputs) {
  ET_NODE_CHECK(check,
                (check.node().flags & ~uint32_t{XNN_FLAG_TRANSPOSE_WEIGHTS}) ==
                    0,
                InvalidProgram,
                "flags 0x%x: only XNN_FLAG_TRANSPOSE_WEIGHTS (1) is known",
                check.node().flags);
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_constant(1, "filter"));
  if (check.has_input(2)) {
    ET_CHECK_OK_OR_RETURN_ERROR(check.require_constant(2, "bias"));
  }
  const bool transposed = (check.node().flags & XNN_FLAG_TRANSPOSE_WEIGHTS) != 0;
  const Dims& x = check.in(0);
  const Dims& w = check.in(1);
  ET_NODE_CHECK(check,
                !x.empty() && w.size() == 2,
                InvalidProgram,
                "input rank %zu and filter rank %zu, expected >= 1 and 2",
                x.size(),
                w.size());
  const size_t k = transposed ? w[0] : w[1];
  const size_t n = transposed ? w[1] : w[0];
  ET_NODE_CHECK(check,
                x.back() == k,
                InvalidProgram,
                "input's last dim %zu does not match the filter's %zu inputs",
                x.back(),
                k);
  char got[96];
  ET_NODE_CHECK(check,
                !check.has_input(2) || check.in(2) == Dims{n},
                InvalidProgram,
                "bias dims %s, expected [%zu]",
                format_dims(check.in(2), got, sizeof(got)),
                n);
  outputs[0] = x;
  outputs[0].back() = n;
  return Error::Ok;
}

// Debian's 2022 XNNPACK refuses a fully connected node with a per-channel
// quantized filter, which upstream's partitioner writes for int8 linears. A
// 1x1 convolution of the input viewed as [M, 1, 1, K] (M the leading dims'
// product) sums the same products and requantizes them the same way, so
// such a node is defined as reshape, convolution, reshape back.
xnn_status define_per_channel_fully_connected(xnn_subgraph_t subgraph,
                                              const Graph& graph,
                                              const Node& node) {
  const ValueInfo& x = graph.values[node.inputs[0]];
  const ValueInfo& w = graph.values[node.inputs[1]];
  const ValueInfo& y = graph.values[node.outputs[0]];
  const size_t m = product(x.dims, 0, x.dims.size() - 1);
  const size_t n = w.dims[0];
  const size_t k = w.dims[1];
  const size_t x_dims[4] = {m, 1, 1, k};
  const size_t w_dims[4] = {n, 1, 1, k};
  const size_t y_dims[4] = {m, 1, 1, n};
  uint32_t x4 = XNN_INVALID_VALUE_ID;
  uint32_t w4 = XNN_INVALID_VALUE_ID;
  uint32_t y4 = XNN_INVALID_VALUE_ID;
  xnn_status status = xnn_define_quantized_tensor_value(
      subgraph, static_cast<xnn_datatype>(x.datatype), x.quant.zero_point,
      x.quant.scale, 4, x_dims, nullptr, XNN_INVALID_VALUE_ID, 0, &x4);
  if (status == xnn_status_success) {
    status = xnn_define_channelwise_quantized_tensor_value(
        subgraph, static_cast<xnn_datatype>(w.datatype), w.quant.scales, 4, 0,
        w_dims, w.constant, XNN_INVALID_VALUE_ID, 0, &w4);
  }
  if (status == xnn_status_success) {
    status = xnn_define_quantized_tensor_value(
        subgraph, static_cast<xnn_datatype>(y.datatype), y.quant.zero_point,
        y.quant.scale, 4, y_dims, nullptr, XNN_INVALID_VALUE_ID, 0, &y4);
  }
  if (status == xnn_status_success) {
    status = xnn_define_static_reshape(
        subgraph, 4, x_dims, node.inputs[0], x4, 0);
  }
  if (status == xnn_status_success) {
    status = xnn_define_convolution_2d(subgraph, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                       1, k, n, node.output_min,
                                       node.output_max, x4, w4,
                                       node.inputs[2], y4, 0);
  }
  if (status == xnn_status_success) {
    status = xnn_define_static_reshape(
        subgraph, y.dims.size(), y.dims.data(), y4, node.outputs[0], 0);
  }
  return status;
}

xnn_status define_fully_connected(xnn_subgraph_t subgraph,
                                  const Graph& graph,
                                  const Node& node) {
  const ValueInfo& filter = graph.values[node.inputs[1]];
  if (filter.quant.scheme == Quantization::Scheme::PerChannel &&
      filter.quant.channel_dim == 0 &&
      (node.flags & XNN_FLAG_TRANSPOSE_WEIGHTS) == 0 &&
      graph.values[node.inputs[0]].quant.scheme ==
          Quantization::Scheme::PerTensor &&
      graph.values[node.outputs[0]].quant.scheme ==
          Quantization::Scheme::PerTensor) {
    return define_per_channel_fully_connected(subgraph, graph, node);
  }
  return xnn_define_fully_connected(subgraph,
                                    node.output_min,
                                    node.output_max,
                                    node.inputs[0],
                                    node.inputs[1],
                                    node.inputs[2],
                                    node.outputs[0],
                                    node.flags);
}

// [..., M, K] x [..., K, N] -> [..., M, N], batch dims equal.
Error infer_batch_matmul(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_fp32());
  ET_NODE_CHECK(check,
                check.node().flags == 0,
                NotSupported,
                "flags 0x%x (a transposed operand) are not supported",
                check.node().flags);
  const Dims& a = check.in(0);
  const Dims& b = check.in(1);
  bool ok = a.size() >= 2 && a.size() == b.size() &&
      a[a.size() - 1] == b[b.size() - 2];
  for (size_t i = 0; ok && i + 2 < a.size(); ++i) {
    ok = a[i] == b[i];
  }
  char da[96], db[96];
  ET_NODE_CHECK(check,
                ok,
                InvalidProgram,
                "cannot multiply %s by %s: expected [..., M, K] and [..., K, N]",
                format_dims(a, da, sizeof(da)),
                format_dims(b, db, sizeof(db)));
  outputs[0] = a;
  outputs[0].back() = b.back();
  return Error::Ok;
}

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
// Rows of one batch per task: enough to amortize packing b[p] per task.
constexpr size_t kBatchMatmulRows = 64;

// out[p] = a[p] @ b[p] for each batch p, on the optimized kernels' packed
// GEMM. The tasks (a block of rows of one batch) are split across the
// delegate's pool, each GEMM running on its task's thread: the
// process-wide pool may have another size than the delegate's.
Error run_batch_matmul(const HostContext& context, const Node& node) {
  namespace opt = kernels::optimized;
  const Dims& a_dims = context.graph.values[node.inputs[0]].dims;
  const size_t rank = a_dims.size();
  const size_t batch = product(a_dims, 0, rank - 2);
  const size_t m = a_dims[rank - 2];
  const size_t k = a_dims[rank - 1];
  const size_t n = context.graph.values[node.outputs[0]].dims.back();
  const auto* a = static_cast<const float*>(context.data[node.inputs[0]]);
  const auto* b = static_cast<const float*>(context.data[node.inputs[1]]);
  auto* out = static_cast<float*>(context.data[node.outputs[0]]);
  std::atomic<bool> failed{false};
  auto task = [&](size_t p, size_t row, size_t rows) {
#ifdef ET_USE_THREADPOOL
    extension::threadpool::NoThreadPoolGuard single_thread;
#endif
    const size_t bytes = opt::sgemm_scratch_bytes(rows, n, k);
    void* scratch = opt::thread_scratch(bytes);
    const float* a_rows = a + (p * m + row) * k;
    const bool ok = scratch != nullptr &&
        opt::sgemm(rows,
                   n,
                   k,
                   opt::MatrixView{a_rows, static_cast<int64_t>(k), 1},
                   opt::GemmB::matrix_of(
                       {b + p * k * n, static_cast<int64_t>(n), 1}),
                   out + (p * m + row) * n,
                   n,
                   opt::GemmEpilogue{},
                   scratch,
                   bytes);
    if (!ok) {
      failed = true;
    }
  };
  pthreadpool_parallelize_2d_tile_1d(
      pool_for(batch * m * k * n, kMinParallelMacs, context.pool),
      [](void* context, size_t p, size_t row, size_t rows) {
        (*static_cast<decltype(task)*>(context))(p, row, rows);
      },
      &task,
      batch,
      m,
      kBatchMatmulRows,
      /*flags=*/0);
  ET_CHECK_OR_RETURN_ERROR(!failed,
                           MemoryAllocationFailed,
                           "batch matmul [%zu, %zu] x [%zu, %zu]: no memory "
                           "for GEMM scratch",
                           m,
                           k,
                           k,
                           n);
  return Error::Ok;
}
#else
// out[p] = a[p] @ b[p] for each batch p: b[p] ([K, N]) is the transposed
// weight of a fully connected operator, created per batch and call since
// XNNPACK packs weights when an operator is created.
Error run_batch_matmul(const HostContext& context, const Node& node) {
  const Dims& a_dims = context.graph.values[node.inputs[0]].dims;
  const size_t rank = a_dims.size();
  const size_t batch = product(a_dims, 0, rank - 2);
  const size_t m = a_dims[rank - 2];
  const size_t k = a_dims[rank - 1];
  const size_t n = context.graph.values[node.outputs[0]].dims.back();
  const auto* a = static_cast<const float*>(context.data[node.inputs[0]]);
  const auto* b = static_cast<const float*>(context.data[node.inputs[1]]);
  auto* out = static_cast<float*>(context.data[node.outputs[0]]);
  pthreadpool_t pool = pool_for(m * k * n, kMinParallelMacs, context.pool);
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
  return Error::Ok;
}
#endif

Error read_attention(const void* table, Node* node, size_t /*index*/) {
  const auto* t =
      static_cast<const fb_xnnpack::XNNScaledDotProductAttention*>(table);
  node->inputs = {
      t->query_id(), t->key_id(), t->value_id(), t->scale_id(), t->mask_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

// Upstream's partitioner does not emit this kind today; it is read so that
// a blob using it is refused by name rather than as an unknown kind.
Error infer_attention(const NodeCheck& check, Dims* /*outputs*/) {
  ET_NODE_CHECK(check,
                false,
                NotSupported,
                "scaled dot-product attention needs an XNNPACK newer than "
                "Debian's");
  return Error::Ok;
}

constexpr uint32_t kOptionalBias = 1u << 2;
constexpr uint32_t kPackedFilterAndBias = (1u << 1) | (1u << 2);

} // namespace

// clang-format off
extern const NodeOps kFullyConnectedOps = {"fully_connected", read_fully_connected, infer_fully_connected, define_fully_connected, nullptr, true, kOptionalBias, kPackedFilterAndBias};
extern const NodeOps kScaledDotProductAttentionOps = {"scaled_dot_product_attention", read_attention, infer_attention, nullptr, nullptr, false, 0, 0};
extern const NodeOps kBatchMatrixMultiplyOps = {"batch_matrix_multiply", read_node_2x1, infer_batch_matmul, nullptr, run_batch_matmul, false, 0, 0};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
