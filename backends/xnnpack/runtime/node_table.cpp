// The one table from node kind to NodeOps. Entries live in the family
// files under nodes/; this file only lists them.

#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::XNodeUnion;

extern const NodeOps kAbsOps;
extern const NodeOps kAddOps;
extern const NodeOps kArgMaxPooling2dOps;
extern const NodeOps kAvgPooling2dOps;
extern const NodeOps kBatchMatrixMultiplyOps;
extern const NodeOps kCeilingOps;
extern const NodeOps kClampOps;
extern const NodeOps kConcatenate2Ops;
extern const NodeOps kConcatenate3Ops;
extern const NodeOps kConcatenate4Ops;
extern const NodeOps kConcatenate5Ops;
extern const NodeOps kConv2dOps;
extern const NodeOps kConvTranspose2dOps;
extern const NodeOps kConvertOps;
extern const NodeOps kCopyOps;
extern const NodeOps kCosOps;
extern const NodeOps kDepthwiseConv2dOps;
extern const NodeOps kDivideOps;
extern const NodeOps kEluOps;
extern const NodeOps kExpOps;
extern const NodeOps kFloorOps;
extern const NodeOps kFullyConnectedOps;
extern const NodeOps kGeluOps;
extern const NodeOps kGlobalAvgPooling2dOps;
extern const NodeOps kHardswishOps;
extern const NodeOps kLeakyReluOps;
extern const NodeOps kLogOps;
extern const NodeOps kMaxPooling2dOps;
extern const NodeOps kMaximumOps;
extern const NodeOps kMinimumOps;
extern const NodeOps kMultiplyOps;
extern const NodeOps kNegateOps;
extern const NodeOps kPreluOps;
extern const NodeOps kReciprocalSquareRootOps;
extern const NodeOps kScaledDotProductAttentionOps;
extern const NodeOps kSigmoidOps;
extern const NodeOps kSinOps;
extern const NodeOps kSoftmaxOps;
extern const NodeOps kSquareOps;
extern const NodeOps kSquareRootOps;
extern const NodeOps kStaticConstantPadOps;
extern const NodeOps kStaticReshapeOps;
extern const NodeOps kStaticResizeBilinear2DOps;
extern const NodeOps kStaticSliceOps;
extern const NodeOps kStaticTransposeOps;
extern const NodeOps kSubtractOps;
extern const NodeOps kTanhOps;

namespace {

struct Entry {
  XNodeUnion kind;
  const NodeOps* ops;
};

// In the union's order, so that entry i is kind i + 1.
constexpr Entry kEntries[] = {
    {XNodeUnion::XNNAdd, &kAddOps},
    {XNodeUnion::XNNFullyConnected, &kFullyConnectedOps},
    {XNodeUnion::XNNSoftmax, &kSoftmaxOps},
    {XNodeUnion::XNNSigmoid, &kSigmoidOps},
    {XNodeUnion::XNNStaticTranspose, &kStaticTransposeOps},
    {XNodeUnion::XNNClamp, &kClampOps},
    {XNodeUnion::XNNConv2d, &kConv2dOps},
    {XNodeUnion::XNNDiv, &kDivideOps},
    {XNodeUnion::XNNStaticResizeBilinear2D, &kStaticResizeBilinear2DOps},
    {XNodeUnion::XNNStaticConstantPad, &kStaticConstantPadOps},
    {XNodeUnion::XNNAvgPooling2d, &kAvgPooling2dOps},
    {XNodeUnion::XNNMinimum, &kMinimumOps},
    {XNodeUnion::XNNDepthwiseConv2d, &kDepthwiseConv2dOps},
    {XNodeUnion::XNNMaxPooling2d, &kMaxPooling2dOps},
    {XNodeUnion::XNNMultiply, &kMultiplyOps},
    {XNodeUnion::XNNSubtract, &kSubtractOps},
    {XNodeUnion::XNNFloor, &kFloorOps},
    {XNodeUnion::XNNConvert, &kConvertOps},
    {XNodeUnion::XNNGlobalAvgPooling2d, &kGlobalAvgPooling2dOps},
    {XNodeUnion::XNNStaticReshape, &kStaticReshapeOps},
    {XNodeUnion::XNNArgMaxPooling2d, &kArgMaxPooling2dOps},
    {XNodeUnion::XNNSquareRoot, &kSquareRootOps},
    {XNodeUnion::XNNCeiling, &kCeilingOps},
    {XNodeUnion::XNNHardswish, &kHardswishOps},
    {XNodeUnion::XNNLeakyReLU, &kLeakyReluOps},
    {XNodeUnion::XNNMaximum, &kMaximumOps},
    {XNodeUnion::XNNNegate, &kNegateOps},
    {XNodeUnion::XNNSquare, &kSquareOps},
    {XNodeUnion::XNNELU, &kEluOps},
    {XNodeUnion::XNNAbs, &kAbsOps},
    {XNodeUnion::XNNPReLU, &kPreluOps},
    {XNodeUnion::XNNConcatenate2, &kConcatenate2Ops},
    {XNodeUnion::XNNConcatenate3, &kConcatenate3Ops},
    {XNodeUnion::XNNConcatenate4, &kConcatenate4Ops},
    {XNodeUnion::XNNStaticSlice, &kStaticSliceOps},
    {XNodeUnion::XNNScaledDotProductAttention, &kScaledDotProductAttentionOps},
    {XNodeUnion::XNNBatchMatrixMultiply, &kBatchMatrixMultiplyOps},
    {XNodeUnion::XNNConcatenate5, &kConcatenate5Ops},
    {XNodeUnion::XNNConvTranspose2d, &kConvTranspose2dOps},
    {XNodeUnion::XNNReciprocalSquareRoot, &kReciprocalSquareRootOps},
    {XNodeUnion::XNNLog, &kLogOps},
    {XNodeUnion::XNNGelu, &kGeluOps},
    {XNodeUnion::XNNTanh, &kTanhOps},
    {XNodeUnion::XNNExp, &kExpOps},
    {XNodeUnion::XNNSin, &kSinOps},
    {XNodeUnion::XNNCopy, &kCopyOps},
    {XNodeUnion::XNNCos, &kCosOps},
};

constexpr size_t kNumKinds = sizeof(kEntries) / sizeof(kEntries[0]);
static_assert(kNumKinds == static_cast<size_t>(XNodeUnion::MAX),
              "every node kind of schema.fbs needs an entry");

constexpr bool in_union_order() {
  for (size_t i = 0; i < kNumKinds; ++i) {
    if (static_cast<size_t>(kEntries[i].kind) != i + 1) {
      return false;
    }
  }
  return true;
}
static_assert(in_union_order(), "kEntries must follow XNodeUnion's order");

} // namespace

const NodeOps* node_ops(XNodeUnion kind) {
  const size_t i = static_cast<size_t>(kind);
  return i >= 1 && i <= kNumKinds ? kEntries[i - 1].ops : nullptr;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
