#pragma once

// Nodes of XNNPACK kinds that the backend runs with kernels of its own, where
// those beat Debian's 2022 XNNPACK on this CPU: float32 3x3 stride-1
// one-group convolutions of the shapes where Winograd F(4x4, 3x3) pays
// (kernels/optimized/cpu/winograd.h, when the optimized kernels are built;
// the backend's README has the measurements), other float32 one-group
// convolutions and float32 fully connected nodes whose filter does not fit
// in L2 (f32_gemm_conv.h), static int8 convolutions
// (one group: qs8_conv.h; depthwise: qs8_dwconv.h, each says why) on CPUs
// with AVX512-VNNI, and fp32 depthwise 3x3 convolutions (f32_dwconv.h) on
// CPUs with AVX2 or AVX-512. The blob is unchanged (it is upstream's
// format); only where a node runs differs.
//
// EXECUTORCH_XNNPACK_HOST_KERNELS=0 in the environment keeps every node on
// XNNPACK (for comparisons).

#include <memory>

#include <executorch/backends/xnnpack/runtime/f32_dwconv.h>
#include <executorch/backends/xnnpack/runtime/f32_inverted_residual.h>
#include <executorch/backends/xnnpack/runtime/graph.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// Gives each node that qualifies its host_run and host_state (packed
// weights). A node whose kernel cannot be prepared (memory, a shape its
// kernel does not take) stays on XNNPACK.
void take_nodes_on_host(Graph* graph);

// For fused steps (fusion.h) built from a node's kernel: the node's
// F32DwConv when take_nodes_on_host gave it one, else null.
std::shared_ptr<const F32DwConv> host_f32_dwconv(const Node& node);

// A float32 1x1, stride-1, unpadded one-group convolution node with
// constant weights that runs on XNNPACK (no host kernel took it): its
// filter, bias and clamp into `conv`. False for any other node, or without
// the optimized kernels.
bool pointwise_conv(const Graph& graph,
                    const Node& node,
                    F32PointwiseConv* conv);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
