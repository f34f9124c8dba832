// Elementwise kinds: unary math and activations, and binary arithmetic with
// numpy broadcasting. Debian's 2022 XNNPACK lacks tanh, gelu, exp, log, sin,
// cos and reciprocal square root in its subgraph API; those run on the host
// (fp32).

#include <cmath>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
#include <executorch/kernels/optimized/simd/isa.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;

namespace {

// Numpy broadcasting, aligned on the last dim.
Error infer_broadcast(const NodeCheck& check, Dims* outputs) {
  const Dims& a = check.in(0);
  const Dims& b = check.in(1);
  Dims& out = outputs[0];
  out.assign(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const size_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    ET_NODE_CHECK(check,
                  da == db || da == 1 || db == 1,
                  InvalidProgram,
                  "inputs do not broadcast: %zu vs %zu at dim -%zu",
                  da,
                  db,
                  i + 1);
    out[out.size() - 1 - i] = da == 1 ? db : da;
  }
  return Error::Ok;
}

// XNNPACK kinds with one input and no params.
template <xnn_status (*F)(xnn_subgraph_t, uint32_t, uint32_t, uint32_t)>
xnn_status define_unary(xnn_subgraph_t subgraph,
                        const Graph& /*graph*/,
                        const Node& node) {
  return F(subgraph, node.inputs[0], node.outputs[0], 0);
}

xnn_status define_clamp(xnn_subgraph_t subgraph,
                        const Graph& /*graph*/,
                        const Node& node) {
  return xnn_define_clamp(subgraph,
                          node.output_min,
                          node.output_max,
                          node.inputs[0],
                          node.outputs[0],
                          0);
}

// XNNPACK kinds with two inputs and a fused clamp.
template <xnn_status (*F)(xnn_subgraph_t,
                          float,
                          float,
                          uint32_t,
                          uint32_t,
                          uint32_t,
                          uint32_t)>
xnn_status define_binary_clamped(xnn_subgraph_t subgraph,
                                 const Graph& /*graph*/,
                                 const Node& node) {
  return F(subgraph,
           node.output_min,
           node.output_max,
           node.inputs[0],
           node.inputs[1],
           node.outputs[0],
           0);
}

template <xnn_status (*F)(xnn_subgraph_t, uint32_t, uint32_t, uint32_t, uint32_t)>
xnn_status define_binary(xnn_subgraph_t subgraph,
                         const Graph& /*graph*/,
                         const Node& node) {
  return F(subgraph, node.inputs[0], node.inputs[1], node.outputs[0], 0);
}

Error read_elu(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::XNNELU*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

xnn_status define_elu(xnn_subgraph_t subgraph,
                      const Graph& /*graph*/,
                      const Node& node) {
  const auto* t = static_cast<const fb_xnnpack::XNNELU*>(node.params);
  return xnn_define_elu(subgraph, t->alpha(), node.inputs[0], node.outputs[0], 0);
}

Error read_leaky_relu(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::XNNLeakyReLU*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

xnn_status define_leaky_relu(xnn_subgraph_t subgraph,
                             const Graph& /*graph*/,
                             const Node& node) {
  const auto* t = static_cast<const fb_xnnpack::XNNLeakyReLU*>(node.params);
  return xnn_define_leaky_relu(
      subgraph, t->negative_slope(), node.inputs[0], node.outputs[0], 0);
}

// PReLU: NHWC input, a constant slope per channel.
Error infer_prelu(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_rank4(0));
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_constant(1, "slope"));
  const size_t channels = check.in(0)[3];
  ET_NODE_CHECK(check,
                check.in(1) == Dims{channels},
                InvalidProgram,
                "slope must have dims [%zu] (the input's channels)",
                channels);
  outputs[0] = check.in(0);
  return Error::Ok;
}

// Host kinds: fp32 math XNNPACK's subgraph API lacks.
Error infer_host_unary(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(check.require_fp32());
  outputs[0] = check.in(0);
  return Error::Ok;
}

template <UnaryFunction F>
Error run_unary(const HostContext& context, const Node& node) {
  const ValueInfo& out = context.graph.values[node.outputs[0]];
  map_elements(F,
               static_cast<const float*>(context.data[node.inputs[0]]),
               static_cast<float*>(context.data[node.outputs[0]]),
               out.numel,
               context.pool);
  return Error::Ok;
}

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
// The optimized kernels' vectorized math (the widest instruction set this
// CPU runs), for the kinds it has.
template <kernels::optimized::UnaryOp Op>
Error run_vector_unary(const HostContext& context, const Node& node) {
  const auto* in = static_cast<const float*>(context.data[node.inputs[0]]);
  auto* out = static_cast<float*>(context.data[node.outputs[0]]);
  const size_t n = context.graph.values[node.outputs[0]].numel;
  const kernels::optimized::SimdKernels& simd = kernels::optimized::simd();
  auto tile = [&](size_t start, size_t count) {
    simd.unary(Op,
               in + start,
               out + start,
               static_cast<int64_t>(count),
               0.0f,
               0.0f);
  };
  parallelize_tiles(
      pool_for(n, kMinParallelElements, context.pool), n, kElementTile, tile);
  return Error::Ok;
}
#define HOST_UNARY(scalar, vector) \
  run_vector_unary<kernels::optimized::UnaryOp::vector>
#else
#define HOST_UNARY(scalar, vector) run_unary<scalar>
#endif

[[maybe_unused]] float tanh_f32(float x) {
  return std::tanh(x);
}
[[maybe_unused]] float gelu_f32(float x) {
  return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2)));
}
[[maybe_unused]] float exp_f32(float x) {
  return std::exp(x);
}
float log_f32(float x) {
  return std::log(x);
}
float sin_f32(float x) {
  return std::sin(x);
}
float cos_f32(float x) {
  return std::cos(x);
}
[[maybe_unused]] float rsqrt_f32(float x) {
  return 1.0f / std::sqrt(x);
}

constexpr uint32_t kNone = 0;

} // namespace

// clang-format off
extern const NodeOps kAbsOps = {"abs", read_node_1x1, infer_same_as_input, define_unary<xnn_define_abs>, nullptr, false, kNone, kNone};
extern const NodeOps kCeilingOps = {"ceiling", read_node_1x1, infer_same_as_input, define_unary<xnn_define_ceiling>, nullptr, false, kNone, kNone};
extern const NodeOps kClampOps = {"clamp", read_node_1x1, infer_same_as_input, define_clamp, nullptr, true, kNone, kNone};
extern const NodeOps kFloorOps = {"floor", read_node_1x1, infer_same_as_input, define_unary<xnn_define_floor>, nullptr, false, kNone, kNone};
extern const NodeOps kHardswishOps = {"hardswish", read_node_1x1, infer_same_as_input, define_unary<xnn_define_hardswish>, nullptr, false, kNone, kNone};
extern const NodeOps kNegateOps = {"negate", read_node_1x1, infer_same_as_input, define_unary<xnn_define_negate>, nullptr, false, kNone, kNone};
extern const NodeOps kSigmoidOps = {"sigmoid", read_node_1x1, infer_same_as_input, define_unary<xnn_define_sigmoid>, nullptr, false, kNone, kNone};
extern const NodeOps kSquareOps = {"square", read_node_1x1, infer_same_as_input, define_unary<xnn_define_square>, nullptr, false, kNone, kNone};
extern const NodeOps kSquareRootOps = {"square_root", read_node_1x1, infer_same_as_input, define_unary<xnn_define_square_root>, nullptr, false, kNone, kNone};
extern const NodeOps kEluOps = {"elu", read_elu, infer_same_as_input, define_elu, nullptr, false, kNone, kNone};
extern const NodeOps kLeakyReluOps = {"leaky_relu", read_leaky_relu, infer_same_as_input, define_leaky_relu, nullptr, false, kNone, kNone};

extern const NodeOps kTanhOps = {"tanh", read_node_1x1, infer_host_unary, nullptr, HOST_UNARY(tanh_f32, kTanh), false, kNone, kNone};
extern const NodeOps kGeluOps = {"gelu", read_node_1x1, infer_host_unary, nullptr, HOST_UNARY(gelu_f32, kGeluErf), false, kNone, kNone};
extern const NodeOps kExpOps = {"exp", read_node_1x1, infer_host_unary, nullptr, HOST_UNARY(exp_f32, kExp), false, kNone, kNone};
extern const NodeOps kLogOps = {"log", read_node_1x1, infer_host_unary, nullptr, run_unary<log_f32>, false, kNone, kNone};
extern const NodeOps kSinOps = {"sin", read_node_1x1, infer_host_unary, nullptr, run_unary<sin_f32>, false, kNone, kNone};
extern const NodeOps kCosOps = {"cos", read_node_1x1, infer_host_unary, nullptr, run_unary<cos_f32>, false, kNone, kNone};
extern const NodeOps kReciprocalSquareRootOps = {"reciprocal_square_root", read_node_1x1, infer_host_unary, nullptr, HOST_UNARY(rsqrt_f32, kRsqrt), false, kNone, kNone};

extern const NodeOps kAddOps = {"add", read_node_2x1, infer_broadcast, define_binary_clamped<xnn_define_add2>, nullptr, true, kNone, kNone};
extern const NodeOps kSubtractOps = {"subtract", read_node_2x1, infer_broadcast, define_binary_clamped<xnn_define_subtract>, nullptr, true, kNone, kNone};
extern const NodeOps kMultiplyOps = {"multiply", read_node_2x1, infer_broadcast, define_binary_clamped<xnn_define_multiply2>, nullptr, true, kNone, kNone};
extern const NodeOps kDivideOps = {"divide", read_node_2x1, infer_broadcast, define_binary_clamped<xnn_define_divide>, nullptr, true, kNone, kNone};
extern const NodeOps kMaximumOps = {"maximum", read_node_2x1, infer_broadcast, define_binary<xnn_define_maximum2>, nullptr, false, kNone, kNone};
extern const NodeOps kMinimumOps = {"minimum", read_node_2x1, infer_broadcast, define_binary<xnn_define_minimum2>, nullptr, false, kNone, kNone};
extern const NodeOps kPreluOps = {"prelu", read_node_2x1, infer_prelu, define_binary<xnn_define_prelu>, nullptr, false, kNone, 1u << 1};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
