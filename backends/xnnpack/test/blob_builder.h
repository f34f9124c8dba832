#pragma once

// Test helper: describes an XNNPACK graph with plain structs and builds the
// delegate blob (header, flatbuffer, constant data) the way the Python
// serializer lays it out, so C++ tests need no Python. Tests start from a
// valid description and change one field to build a malformed blob.

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

using Dims = std::vector<uint32_t>;

struct Params {
  xnnpack_graph::NodeParams type = xnnpack_graph::NodeParams::NONE;
  std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>
      build;
};

struct ValueDesc {
  xnnpack_graph::DataType datatype = xnnpack_graph::DataType::fp32;
  Dims dims;
  uint32_t flags = 0;
  uint32_t external_index = 0;
  bool is_constant = false;
  std::vector<float> constant;
  // Replaces the computed constant reference (offset, size).
  std::optional<std::pair<uint64_t, uint64_t>> constant_ref;
  std::vector<uint32_t> dynamic_dims;
};

struct NodeDesc {
  xnnpack_graph::NodeKind kind = xnnpack_graph::NodeKind::invalid;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  Params params;
  std::optional<std::pair<float, float>> clamp;
};

class BlobBuilder {
 public:
  // An external input or output; `arg` is its index in the delegate args.
  // An input's `dynamic_dims` have `dims` as their upper bounds.
  uint32_t input(Dims dims,
                 uint32_t arg,
                 std::vector<uint32_t> dynamic_dims = {});
  uint32_t output(Dims dims, uint32_t arg);
  uint32_t tensor(Dims dims);
  uint32_t constant(Dims dims, std::vector<float> data);
  void node(xnnpack_graph::NodeKind kind,
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

  std::vector<uint8_t> build() const;

 private:
  uint32_t add(ValueDesc value);

  std::vector<ValueDesc> values_;
  std::vector<NodeDesc> nodes_;
};

// Byte offsets of header fields, for corrupting a built blob.
inline constexpr size_t kFlatbufferOffsetField = 8;
inline constexpr size_t kConstantOffsetField = 24;
inline constexpr size_t kConstantSizeField = 32;

// Params of each params table; conv and pool padding is symmetric.
Params conv_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation,
                   uint32_t groups,
                   uint32_t group_input_channels,
                   uint32_t group_output_channels,
                   bool depthwise = false,
                   uint32_t adjustment = 0);
Params pool_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation = 1);
Params fully_connected_params(bool transpose_weights);
Params scalar_params(float value);
Params gelu_params(bool tanh_approximation);
Params concatenate_params(uint32_t axis);
Params transpose_params(std::vector<uint32_t> perm);
// `dim_sources` and `modes` (the dynamic-shape fields) are left out when
// empty.
Params reshape_params(std::vector<uint32_t> new_shape,
                      std::vector<int32_t> dim_sources = {});
Params slice_params(std::vector<uint64_t> offsets,
                    std::vector<uint64_t> sizes,
                    std::vector<xnnpack_graph::SliceMode> modes = {});
Params pad_params(std::vector<uint64_t> pre,
                  std::vector<uint64_t> post,
                  float value);
Params resize_params(uint32_t height, uint32_t width, bool align_corners);
Params layer_norm_params(uint32_t normalized_dims, float epsilon);

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
