#pragma once

// Test helper: describes an XNNPACK graph with plain structs and builds the
// delegate blob in upstream's format (header, XNNGraph flatbuffer, constant
// data) the way the Python serializer lays it out, so C++ tests need no
// Python. Tests start from a valid description and change one field to build
// a malformed blob.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <executorch/backends/xnnpack/schema_generated.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

using Dims = std::vector<uint32_t>;
using NodeKind = fb_xnnpack::XNodeUnion;

struct NodeDesc;

// Builds a node's table (the kind's table in XNodeUnion) from its wiring.
// Without one, a node with one input is an _XNNNode1x1 and a node with two
// an _XNNNode2x1.
struct Params {
  std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&,
                                          const NodeDesc&)>
      build;
};

struct ValueDesc {
  fb_xnnpack::XNNDatatype datatype = fb_xnnpack::XNNDatatype::xnn_datatype_fp32;
  Dims dims;
  // XNN_VALUE_FLAG_EXTERNAL_INPUT (1) / _OUTPUT (2).
  uint32_t flags = 0;
  uint32_t external_id = UINT32_MAX;
  bool is_constant = false;
  std::vector<float> constant;
  // Replaces the computed constant_data entry (offset, size).
  std::optional<std::pair<uint64_t, uint64_t>> constant_ref;
  // Stores the constant under this key in the named data instead of the
  // blob (offset UINT64_MAX).
  std::string named_key;
  // Replaces the value's id_out (its position by default).
  std::optional<uint32_t> id_out;
  // A quantized value: one (scale, zero point), or per-channel scales along
  // channel_dim.
  std::optional<std::pair<float, int32_t>> per_tensor;
  std::vector<float> channel_scales;
  uint32_t channel_dim = 0;
  // A constant's bytes when its datatype is not fp32 (replaces `constant`).
  std::vector<uint8_t> bytes;
};

struct NodeDesc {
  NodeKind kind = NodeKind::NONE;
  std::vector<uint32_t> inputs;
  uint32_t output = 0;
  Params params;
  std::optional<std::pair<float, float>> clamp;
};

inline constexpr uint32_t kInputFlag = 1;
inline constexpr uint32_t kOutputFlag = 2;

class BlobBuilder {
 public:
  // An external input or output; `arg` is its index in the delegate args.
  uint32_t input(Dims dims, uint32_t arg);
  uint32_t output(Dims dims, uint32_t arg);
  uint32_t tensor(Dims dims);
  uint32_t constant(Dims dims, std::vector<float> data);
  void node(NodeKind kind,
            std::vector<uint32_t> inputs,
            uint32_t output,
            Params params = {},
            std::optional<std::pair<float, float>> clamp = std::nullopt);

  std::vector<ValueDesc>& values() {
    return values_;
  }
  std::vector<NodeDesc>& nodes() {
    return nodes_;
  }
  // The ids listed as the graph's inputs and outputs (by default the
  // external values' ids, in arg order).
  std::optional<std::vector<uint32_t>>& input_ids() {
    return input_ids_;
  }

  std::vector<uint8_t> build() const;

 private:
  uint32_t add(ValueDesc value);

  std::vector<ValueDesc> values_;
  std::vector<NodeDesc> nodes_;
  std::optional<std::vector<uint32_t>> input_ids_;
};

// Byte offsets of header fields, for corrupting a built blob.
inline constexpr size_t kFlatbufferOffsetField = 10;
inline constexpr size_t kFlatbufferSizeField = 14;
inline constexpr size_t kConstantOffsetField = 18;
inline constexpr size_t kConstantSizeField = 22;

// Params of each node table; conv and pool padding is symmetric. Conv
// inputs are (input, filter[, bias]).
Params conv_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation,
                   uint32_t groups,
                   uint32_t group_input_channels,
                   uint32_t group_output_channels,
                   uint32_t adjustment = 0);
Params pool_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation = 1);
// Global average pooling keeping the pooled dims ([N, 1, 1, C]).
Params keep_dims_params();
// Inputs (input, filter[, bias]).
Params fully_connected_params(bool transpose_weights);
Params elu_params(float alpha);
Params leaky_relu_params(float negative_slope);
// For XNNConcatenate2..5 (as many inputs as the kind says).
Params concatenate_params(uint32_t axis);
Params transpose_params(std::vector<uint32_t> perm);
// `dim_sources` and `modes` (the dynamic-shape extensions) are left out
// when empty.
Params reshape_params(std::vector<uint32_t> new_shape,
                      std::vector<int32_t> dim_sources = {});
Params slice_params(std::vector<uint32_t> offsets,
                    std::vector<uint32_t> sizes,
                    std::vector<fb_xnnpack::SliceMode> modes = {});
Params pad_params(std::vector<uint32_t> pre,
                  std::vector<uint32_t> post,
                  float value);
Params resize_params(uint32_t height, uint32_t width, bool align_corners);

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
