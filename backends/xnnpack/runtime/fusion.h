#pragma once

// Fused host steps: runs of nodes recognised at init and run as one host
// step on the optimized kernels. Runs that the lowering writes for
// operations upstream's blob format has no kind for (layer norm as row
// reductions and elementwise nodes, PyTorch's _safe_softmax as a masked
// softmax), attention's scores (a scale and an added mask before a softmax:
// one pass per row instead of three nodes' passes over the whole tensor),
// and MobileNetV2's inverted residual block (1x1 expansion, 3x3 depthwise,
// 1x1 projection convolutions, plus the block's input), whose layers one by
// one wait on memory (f32_inverted_residual.h says why).
// The blob keeps upstream's format and nodes (upstream's runtime runs them
// one by one); fusing is only how this runtime executes them. A run is
// fused only when its intermediate values are read nowhere else and every
// parameter (reduction weights, epsilon, the -FLT_MAX floor) is what the
// pattern means; anything else runs node by node.
//
// Without the optimized kernels (EXECUTORCH_XNNPACK_OPTIMIZED_HOST unset)
// nothing is fused.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <executorch/backends/xnnpack/runtime/f32_inverted_residual.h>
#include <executorch/backends/xnnpack/runtime/graph.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

struct Fusion {
  enum class Kind {
    // out = (x - mean) / sqrt(var + eps) [* weight] [+ bias] over the last
    // dim.
    kLayerNorm,
    // out = softmax(x [* scale] [+ mask]) over the last dim; rows that are
    // all -inf (after scale and mask) give 0.
    kSafeSoftmax,
    // out = softmax(x [* scale] [+ mask]) over the last dim, with at least
    // one of scale and mask (attention's scores; softmax alone stays an
    // XNNPACK node). Rows that are all -inf give NaN, as in PyTorch.
    kSoftmax,
    // out = project(depthwise(expand(x))) [+ x], NHWC: `block`.
    kInvertedResidual,
  };
  Kind kind = Kind::kLayerNorm;
  // The fused nodes [first_node, end_node).
  size_t first_node = 0;
  size_t end_node = 0;
  uint32_t input = kNoValue;
  uint32_t output = kNoValue;
  // Layer norm: constant [C] values, or kNoValue.
  uint32_t weight = kNoValue;
  uint32_t bias = kNoValue;
  float eps = 0.0f;
  // Softmax: the scale (a division by c becomes 1/c) and the mask added to
  // each row, broadcast over x's leading dims (kNoValue: none).
  float scale = 1.0f;
  uint32_t mask = kNoValue;
  // Inverted residual: the packed convolutions.
  std::shared_ptr<const F32InvertedResidual> block = nullptr;

  // "layer_norm", "safe_softmax", "softmax" or "inverted_residual", for
  // event names.
  const char* name() const;
};

// The fusable runs of `graph`'s nodes, disjoint and in node order.
std::vector<Fusion> find_fusions(const Graph& graph);

// Runs a fused step at the graph's current dims.
runtime::Error run_fusion(const Fusion& fusion, const HostContext& context);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
