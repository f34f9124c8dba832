#pragma once

// Per node kind: how many inputs it takes, which params table it needs,
// whether it fuses an output clamp, and whether XNNPACK's subgraph API runs
// it or the backend's own host kernels do (Debian's XNNPACK lacks tanh,
// gelu, transpose, concatenate, slice, batch matmul, layer norm and a
// softmax that tolerates fully masked rows in its subgraph API).

#include <cstddef>

#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>

namespace executorch {
namespace backends {
namespace xnnpack {

struct NodeTraits {
  size_t min_inputs;
  size_t max_inputs;
  xnnpack_graph::NodeParams params;
  bool fuses_clamp;
  bool on_host;
};

// Traits of `kind`, or nullptr for an unknown kind.
const NodeTraits* node_traits(xnnpack_graph::NodeKind kind);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
