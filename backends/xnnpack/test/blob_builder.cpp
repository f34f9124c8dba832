#include <executorch/backends/xnnpack/test/blob_builder.h>

#include <algorithm>
#include <cstring>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {

namespace {

using namespace fb_xnnpack;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr size_t kHeaderSize = 30;
constexpr size_t kFlatbufferAlignment = 16;
constexpr size_t kConstantAlignment = 64;
constexpr uint32_t kNoValue = UINT32_MAX;

size_t align_up(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

template <typename T>
void put(std::vector<uint8_t>& out, size_t at, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
}

uint32_t input_or_none(const NodeDesc& n, size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : kNoValue;
}

} // namespace

uint32_t BlobBuilder::add(ValueDesc value) {
  values_.push_back(std::move(value));
  return static_cast<uint32_t>(values_.size() - 1);
}

uint32_t BlobBuilder::input(Dims dims, uint32_t arg) {
  ValueDesc v;
  v.dims = std::move(dims);
  v.flags = kInputFlag;
  v.external_id = arg;
  return add(std::move(v));
}

uint32_t BlobBuilder::output(Dims dims, uint32_t arg) {
  ValueDesc v;
  v.dims = std::move(dims);
  v.flags = kOutputFlag;
  v.external_id = arg;
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
  n.output = output;
  n.params = std::move(params);
  n.clamp = clamp;
  nodes_.push_back(std::move(n));
}

std::vector<uint8_t> BlobBuilder::build() const {
  FlatBufferBuilder fbb;
  std::vector<uint8_t> constants;
  // Entry 0 of constant_data is unused: constant_buffer_idx 0 means none.
  std::vector<Offset<ConstantDataOffset>> constant_data{
      CreateConstantDataOffset(fbb, 0, 0)};
  std::vector<Offset<XValue>> values;
  std::vector<std::pair<uint32_t, uint32_t>> inputs;  // (arg, id)
  std::vector<std::pair<uint32_t, uint32_t>> outputs;
  for (size_t i = 0; i < values_.size(); ++i) {
    const ValueDesc& v = values_[i];
    const uint32_t id = v.id_out.value_or(static_cast<uint32_t>(i));
    uint32_t buffer_idx = 0;
    if (v.is_constant || v.constant_ref) {
      uint64_t offset = 0;
      const void* data = v.constant.data();
      uint64_t size = v.constant.size() * sizeof(float);
      if (!v.bytes.empty()) {
        data = v.bytes.data();
        size = v.bytes.size();
      }
      if (!v.named_key.empty()) {
        offset = UINT64_MAX;
      } else if (v.is_constant) {
        offset = align_up(constants.size(), kConstantAlignment);
        constants.resize(offset + size);
        std::memcpy(constants.data() + offset, data, size);
      }
      if (v.constant_ref) {
        offset = v.constant_ref->first;
        size = v.constant_ref->second;
      }
      buffer_idx = static_cast<uint32_t>(constant_data.size());
      constant_data.push_back(CreateConstantDataOffset(
          fbb,
          offset,
          size,
          v.named_key.empty() ? 0 : fbb.CreateString(v.named_key)));
    }
    if (v.flags & kInputFlag) {
      inputs.emplace_back(v.external_id, id);
    }
    if (v.flags & kOutputFlag) {
      outputs.emplace_back(v.external_id, id);
    }
    const auto tensor = CreateXNNTensorValue(
        fbb,
        v.datatype,
        static_cast<uint32_t>(v.dims.size()),
        fbb.CreateVector(v.dims),
        buffer_idx,
        v.external_id,
        v.flags,
        id);
    if (v.per_tensor) {
      const auto quant =
          CreatePerTensorQuant(fbb, v.per_tensor->first, v.per_tensor->second);
      values.push_back(CreateXValue(
          fbb,
          XValueUnion::XNNQuantizedTensorValue,
          CreateXNNQuantizedTensorValue(
              fbb, tensor, XNNQuantParams::PerTensorQuant, quant.Union())
              .Union()));
    } else if (!v.channel_scales.empty()) {
      const auto quant = CreatePerChannelQuant(
          fbb,
          fbb.CreateVector(v.channel_scales),
          static_cast<int32_t>(v.channel_dim),
          /*scale_buffer_idx=*/0,
          static_cast<uint32_t>(v.channel_scales.size()));
      values.push_back(CreateXValue(
          fbb,
          XValueUnion::XNNQuantizedTensorValue,
          CreateXNNQuantizedTensorValue(
              fbb, tensor, XNNQuantParams::PerChannelQuant, quant.Union())
              .Union()));
    } else {
      values.push_back(
          CreateXValue(fbb, XValueUnion::XNNTensorValue, tensor.Union()));
    }
  }
  std::vector<Offset<XNode>> nodes;
  for (const NodeDesc& n : nodes_) {
    Offset<void> table;
    if (n.params.build) {
      table = n.params.build(fbb, n);
    } else if (n.inputs.size() == 2) {
      table =
          Create_XNNNode2x1(fbb, n.inputs[0], n.inputs[1], n.output).Union();
    } else {
      table = Create_XNNNode1x1(fbb, input_or_none(n, 0), n.output).Union();
    }
    Offset<OutputMinMax> clamp;
    if (n.clamp) {
      clamp = CreateOutputMinMax(fbb, n.clamp->first, n.clamp->second);
    }
    nodes.push_back(CreateXNode(fbb, n.kind, table, 0, clamp));
  }
  std::sort(inputs.begin(), inputs.end());
  std::sort(outputs.begin(), outputs.end());
  std::vector<uint32_t> input_ids;
  std::vector<uint32_t> output_ids;
  for (const auto& in : inputs) {
    input_ids.push_back(in.second);
  }
  for (const auto& out : outputs) {
    output_ids.push_back(out.second);
  }
  if (input_ids_) {
    input_ids = *input_ids_;
  }
  FinishXNNGraphBuffer(
      fbb,
      CreateXNNGraph(fbb,
                     fbb.CreateString("1"),
                     fbb.CreateVector(nodes),
                     fbb.CreateVector(values),
                     static_cast<uint32_t>(inputs.size() + outputs.size()),
                     fbb.CreateVector(input_ids),
                     fbb.CreateVector(output_ids),
                     0,
                     fbb.CreateVector(constant_data)));

  const size_t fb_offset = align_up(kHeaderSize, kFlatbufferAlignment);
  const size_t const_offset =
      align_up(fb_offset + fbb.GetSize(), kConstantAlignment);
  std::vector<uint8_t> blob(const_offset + constants.size());
  std::memcpy(blob.data() + 4, "XH00", 4);
  put<uint16_t>(blob, 8, kHeaderSize);
  put<uint32_t>(blob, kFlatbufferOffsetField, fb_offset);
  put<uint32_t>(blob, kFlatbufferSizeField, fbb.GetSize());
  put<uint32_t>(blob, kConstantOffsetField, const_offset);
  put<uint64_t>(blob, kConstantSizeField, constants.size());
  std::memcpy(blob.data() + fb_offset, fbb.GetBufferPointer(), fbb.GetSize());
  // A graph without constants has an empty vector, whose data() may be null
  // (memcpy's source must not be, even for 0 bytes: UBSan).
  if (!constants.empty()) {
    std::memcpy(blob.data() + const_offset, constants.data(), constants.size());
  }
  return blob;
}

Params conv_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation,
                   uint32_t groups,
                   uint32_t group_input_channels,
                   uint32_t group_output_channels,
                   uint32_t adjustment) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return Create_XNNNodeConv(f,
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
                              group_input_channels,
                              group_output_channels,
                              groups,
                              adjustment,
                              adjustment,
                              input_or_none(n, 0),
                              input_or_none(n, 1),
                              input_or_none(n, 2),
                              n.output)
        .Union();
  }};
}

Params pool_params(uint32_t kernel,
                   uint32_t stride,
                   uint32_t padding,
                   uint32_t dilation) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return Create_XNNPooling2D(f,
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
                               input_or_none(n, 0),
                               n.output)
        .Union();
  }};
}

Params keep_dims_params() {
  // XNN_FLAG_KEEP_DIMS.
  constexpr uint32_t kKeepDims = 0x40;
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return Create_XNNNode1x1(f, input_or_none(n, 0), n.output, kKeepDims)
        .Union();
  }};
}

Params fully_connected_params(bool transpose_weights) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNFullyConnected(f,
                                   input_or_none(n, 0),
                                   input_or_none(n, 1),
                                   input_or_none(n, 2),
                                   n.output,
                                   transpose_weights ? 1 : 0)
        .Union();
  }};
}

Params elu_params(float alpha) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNELU(f, alpha, input_or_none(n, 0), n.output).Union();
  }};
}

Params leaky_relu_params(float negative_slope) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNLeakyReLU(f, negative_slope, input_or_none(n, 0), n.output)
        .Union();
  }};
}

Params concatenate_params(uint32_t axis) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return Create_XNNCat(f,
                         axis,
                         input_or_none(n, 0),
                         input_or_none(n, 1),
                         input_or_none(n, 2),
                         input_or_none(n, 3),
                         n.output,
                         0,
                         input_or_none(n, 4))
        .Union();
  }};
}

Params transpose_params(std::vector<uint32_t> perm) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNStaticTranspose(f,
                                    static_cast<uint32_t>(perm.size()),
                                    f.CreateVector(perm),
                                    input_or_none(n, 0),
                                    n.output)
        .Union();
  }};
}

Params reshape_params(std::vector<uint32_t> new_shape,
                      std::vector<int32_t> dim_sources) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNStaticReshape(
               f,
               static_cast<uint32_t>(new_shape.size()),
               f.CreateVector(new_shape),
               input_or_none(n, 0),
               n.output,
               0,
               dim_sources.empty() ? 0 : f.CreateVector(dim_sources))
        .Union();
  }};
}

Params slice_params(std::vector<uint32_t> offsets,
                    std::vector<uint32_t> sizes,
                    std::vector<SliceMode> modes) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNStaticSlice(f,
                                static_cast<uint32_t>(offsets.size()),
                                f.CreateVector(offsets),
                                f.CreateVector(sizes),
                                input_or_none(n, 0),
                                n.output,
                                0,
                                modes.empty() ? 0 : f.CreateVector(modes))
        .Union();
  }};
}

Params pad_params(std::vector<uint32_t> pre,
                  std::vector<uint32_t> post,
                  float value) {
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNStaticConstantPad(f,
                                      f.CreateVector(pre),
                                      f.CreateVector(post),
                                      value,
                                      input_or_none(n, 0),
                                      n.output)
        .Union();
  }};
}

Params resize_params(uint32_t height, uint32_t width, bool align_corners) {
  // XNN_FLAG_ALIGN_CORNERS.
  constexpr uint32_t kAlignCorners = 8;
  return {[=](FlatBufferBuilder& f, const NodeDesc& n) {
    return CreateXNNStaticResizeBilinear2D(f,
                                           height,
                                           width,
                                           input_or_none(n, 0),
                                           n.output,
                                           align_corners ? kAlignCorners : 0)
        .Union();
  }};
}

} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
