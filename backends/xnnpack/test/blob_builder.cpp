#include <executorch/backends/xnnpack/test/blob_builder.h>

#include <cstring>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

namespace {

using namespace xnnpack_graph;

constexpr size_t kHeaderSize = 40;
constexpr size_t kFlatbufferAlignment = 16;
constexpr size_t kConstantAlignment = 64;
constexpr size_t kTrailingPadding = 16;

size_t align_up(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

void put_u32(std::vector<uint8_t>& out, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) {
    out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
}

void put_u64(std::vector<uint8_t>& out, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) {
    out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
}

} // namespace

uint32_t BlobBuilder::add(ValueDesc value) {
  values_.push_back(std::move(value));
  return static_cast<uint32_t>(values_.size() - 1);
}

uint32_t BlobBuilder::input(Dims dims,
                            uint32_t arg,
                            std::vector<uint32_t> dynamic_dims) {
  ValueDesc v;
  v.dims = std::move(dims);
  v.dynamic_dims = std::move(dynamic_dims);
  v.flags = static_cast<uint32_t>(ValueFlags::external_input);
  v.external_index = arg;
  return add(std::move(v));
}

uint32_t BlobBuilder::output(Dims dims, uint32_t arg) {
  ValueDesc v;
  v.dims = std::move(dims);
  v.flags = static_cast<uint32_t>(ValueFlags::external_output);
  v.external_index = arg;
  return add(std::move(v));
}

uint32_t BlobBuilder::tensor(Dims dims) {
  ValueDesc v;
  v.dims = std::move(dims);
  return add(std::move(v));
}

uint32_t BlobBuilder::constant(Dims dims, std::vector<float> data) {
  ValueDesc v;
  v.dims = std::move(dims);
  v.is_constant = true;
  v.constant = std::move(data);
  return add(std::move(v));
}

void BlobBuilder::node(NodeKind kind,
                       std::vector<uint32_t> inputs,
                       uint32_t output,
                       Params params,
                       std::optional<std::pair<float, float>> clamp) {
  NodeDesc n;
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  n.params = std::move(params);
  n.clamp = clamp;
  nodes_.push_back(std::move(n));
}

std::vector<uint8_t> BlobBuilder::build() const {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<uint8_t> constants;
  std::vector<flatbuffers::Offset<Value>> values;
  for (const ValueDesc& v : values_) {
    std::optional<ConstantRef> ref;
    if (v.is_constant) {
      const size_t offset = align_up(constants.size(), kConstantAlignment);
      const size_t size = v.constant.size() * sizeof(float);
      constants.resize(offset + size);
      std::memcpy(constants.data() + offset, v.constant.data(), size);
      ref = ConstantRef(offset, size);
    }
    if (v.constant_ref) {
      ref = ConstantRef(v.constant_ref->first, v.constant_ref->second);
    }
    values.push_back(CreateValue(
        fbb,
        v.datatype,
        fbb.CreateVector(v.dims),
        static_cast<ValueFlags>(v.flags),
        v.external_index,
        ref ? &*ref : nullptr,
        Quantization::NONE,
        0,
        v.dynamic_dims.empty() ? 0 : fbb.CreateVector(v.dynamic_dims)));
  }
  std::vector<flatbuffers::Offset<Node>> nodes;
  for (const NodeDesc& n : nodes_) {
    const flatbuffers::Offset<void> params =
        n.params.build ? n.params.build(fbb) : flatbuffers::Offset<void>();
    std::optional<OutputClamp> clamp;
    if (n.clamp) {
      clamp = OutputClamp(n.clamp->first, n.clamp->second);
    }
    nodes.push_back(CreateNode(fbb,
                               n.kind,
                               fbb.CreateVector(n.inputs),
                               fbb.CreateVector(n.outputs),
                               n.params.type,
                               params,
                               clamp ? &*clamp : nullptr));
  }
  FinishGraphBuffer(
      fbb,
      CreateGraph(fbb, 1, fbb.CreateVector(values), fbb.CreateVector(nodes)));

  const size_t fb_offset = align_up(kHeaderSize, kFlatbufferAlignment);
  const size_t const_offset =
      align_up(fb_offset + fbb.GetSize(), kConstantAlignment);
  std::vector<uint8_t> blob(const_offset + constants.size() + kTrailingPadding);
  std::memcpy(blob.data(), "XNB1", 4);
  put_u32(blob, 4, kHeaderSize);
  put_u64(blob, kFlatbufferOffsetField, fb_offset);
  put_u64(blob, 16, fbb.GetSize());
  put_u64(blob, kConstantOffsetField, const_offset);
  put_u64(blob, kConstantSizeField, constants.size());
  std::memcpy(blob.data() + fb_offset, fbb.GetBufferPointer(), fbb.GetSize());
  std::memcpy(blob.data() + const_offset, constants.data(), constants.size());
  return blob;
}

Params conv_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation,
                   uint32_t groups,
                   uint32_t group_input_channels,
                   uint32_t group_output_channels,
                   bool depthwise,
                   uint32_t adjustment) {
  return {NodeParams::Conv2dParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateConv2dParams(f,
                                      padding,
                                      padding,
                                      padding,
                                      padding,
                                      kernel,
                                      kernel,
                                      stride,
                                      stride,
                                      dilation,
                                      dilation,
                                      groups,
                                      group_input_channels,
                                      group_output_channels,
                                      depthwise,
                                      adjustment,
                                      adjustment)
                .Union();
          }};
}

Params pool_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation) {
  return {NodeParams::Pool2dParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreatePool2dParams(f,
                                      padding,
                                      padding,
                                      padding,
                                      padding,
                                      kernel,
                                      kernel,
                                      stride,
                                      stride,
                                      dilation,
                                      dilation)
                .Union();
          }};
}

Params fully_connected_params(bool transpose_weights) {
  return {NodeParams::FullyConnectedParams,
          [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateFullyConnectedParams(f, transpose_weights).Union();
          }};
}

Params scalar_params(float value) {
  return {NodeParams::ScalarParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateScalarParams(f, value).Union();
          }};
}

Params gelu_params(bool tanh_approximation) {
  return {NodeParams::GeluParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateGeluParams(f, tanh_approximation).Union();
          }};
}

Params concatenate_params(uint32_t axis) {
  return {NodeParams::ConcatenateParams,
          [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateConcatenateParams(f, axis).Union();
          }};
}

Params transpose_params(std::vector<uint32_t> perm) {
  return {NodeParams::TransposeParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateTransposeParams(f, f.CreateVector(perm)).Union();
          }};
}

Params reshape_params(std::vector<uint32_t> new_shape,
                      std::vector<int32_t> dim_sources) {
  return {NodeParams::ReshapeParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateReshapeParams(
                       f,
                       f.CreateVector(new_shape),
                       dim_sources.empty() ? 0 : f.CreateVector(dim_sources))
                .Union();
          }};
}

Params slice_params(std::vector<uint64_t> offsets,
                    std::vector<uint64_t> sizes,
                    std::vector<SliceMode> modes) {
  return {NodeParams::SliceParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateSliceParams(f,
                                     f.CreateVector(offsets),
                                     f.CreateVector(sizes),
                                     modes.empty() ? 0 : f.CreateVector(modes))
                .Union();
          }};
}

Params pad_params(std::vector<uint64_t> pre,
                  std::vector<uint64_t> post,
                  float value) {
  return {NodeParams::ConstantPadParams,
          [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateConstantPadParams(
                       f, f.CreateVector(pre), f.CreateVector(post), value)
                .Union();
          }};
}

Params resize_params(uint32_t height, uint32_t width, bool align_corners) {
  return {NodeParams::ResizeBilinear2dParams,
          [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateResizeBilinear2dParams(f, height, width, align_corners)
                .Union();
          }};
}

Params layer_norm_params(uint32_t normalized_dims, float epsilon) {
  return {NodeParams::LayerNormParams, [=](flatbuffers::FlatBufferBuilder& f) {
            return CreateLayerNormParams(f, normalized_dims, epsilon).Union();
          }};
}

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
