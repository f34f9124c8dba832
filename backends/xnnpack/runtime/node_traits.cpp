#include <executorch/backends/xnnpack/runtime/node_traits.h>

#include <limits>

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

using xnnpack_graph::NodeKind;
using xnnpack_graph::NodeParams;

constexpr size_t kAny = std::numeric_limits<size_t>::max();

struct Entry {
  NodeKind kind;
  NodeTraits traits;
};

constexpr Entry kEntries[] = {
    {NodeKind::conv2d, {2, 3, NodeParams::Conv2dParams, true, false}},
    {NodeKind::deconv2d, {2, 3, NodeParams::Conv2dParams, true, false}},
    {NodeKind::fully_connected,
     {2, 3, NodeParams::FullyConnectedParams, true, false}},
    {NodeKind::batch_matrix_multiply, {2, 2, NodeParams::NONE, false, true}},
    {NodeKind::add, {2, 2, NodeParams::NONE, true, false}},
    {NodeKind::subtract, {2, 2, NodeParams::NONE, true, false}},
    {NodeKind::multiply, {2, 2, NodeParams::NONE, true, false}},
    {NodeKind::divide, {2, 2, NodeParams::NONE, true, false}},
    {NodeKind::maximum, {2, 2, NodeParams::NONE, false, false}},
    {NodeKind::minimum, {2, 2, NodeParams::NONE, false, false}},
    {NodeKind::clamp, {1, 1, NodeParams::NONE, true, false}},
    {NodeKind::sigmoid, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::tanh, {1, 1, NodeParams::NONE, false, true}},
    {NodeKind::gelu, {1, 1, NodeParams::GeluParams, false, true}},
    {NodeKind::hardswish, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::leaky_relu, {1, 1, NodeParams::ScalarParams, false, false}},
    {NodeKind::elu, {1, 1, NodeParams::ScalarParams, false, false}},
    {NodeKind::prelu, {2, 2, NodeParams::NONE, false, false}},
    {NodeKind::softmax, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::max_pool2d, {1, 1, NodeParams::Pool2dParams, true, false}},
    {NodeKind::avg_pool2d, {1, 1, NodeParams::Pool2dParams, true, false}},
    {NodeKind::global_avg_pool2d, {1, 1, NodeParams::NONE, true, false}},
    {NodeKind::concatenate,
     {1, kAny, NodeParams::ConcatenateParams, false, true}},
    {NodeKind::static_transpose,
     {1, 1, NodeParams::TransposeParams, false, true}},
    {NodeKind::static_reshape, {1, 1, NodeParams::ReshapeParams, false, false}},
    {NodeKind::static_slice, {1, 1, NodeParams::SliceParams, false, true}},
    {NodeKind::constant_pad,
     {1, 1, NodeParams::ConstantPadParams, false, false}},
    {NodeKind::resize_bilinear2d,
     {1, 1, NodeParams::ResizeBilinear2dParams, false, false}},
    {NodeKind::abs, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::negate, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::square_root, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::square, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::floor, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::ceiling, {1, 1, NodeParams::NONE, false, false}},
    {NodeKind::layer_norm, {1, 3, NodeParams::LayerNormParams, false, true}},
    {NodeKind::safe_softmax, {1, 1, NodeParams::NONE, false, true}},
};

} // namespace

const NodeTraits* node_traits(NodeKind kind) {
  for (const Entry& entry : kEntries) {
    if (entry.kind == kind) {
      return &entry.traits;
    }
  }
  return nullptr;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
