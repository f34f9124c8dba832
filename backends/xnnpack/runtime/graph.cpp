#include <executorch/backends/xnnpack/runtime/graph.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include <executorch/backends/xnnpack/runtime/node_ops.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::XNNDatatype;
using runtime::Error;
using runtime::FreeableBuffer;
using runtime::NamedDataMap;
using runtime::Result;

namespace {

constexpr uint64_t kNamedOffset = std::numeric_limits<uint64_t>::max();
// XNNPACK's kernels may read up to XNN_EXTRA_BYTES past the end of a tensor
// they read in place.
constexpr size_t kExtraBytes = XNN_EXTRA_BYTES;

// Bytes per element of `datatype`; 0 for packed 4-bit types. False for a
// value outside the enum.
bool element_size(XNNDatatype datatype, size_t* size) {
  switch (datatype) {
    case XNNDatatype::xnn_datatype_fp32:
    case XNNDatatype::xnn_datatype_qint32:
    case XNNDatatype::xnn_datatype_qcint32:
    case XNNDatatype::xnn_datatype_int32:
    case XNNDatatype::xnn_datatype_pfp32:
      *size = 4;
      return true;
    case XNNDatatype::xnn_datatype_fp16:
    case XNNDatatype::xnn_datatype_bf16:
      *size = 2;
      return true;
    case XNNDatatype::xnn_datatype_qint8:
    case XNNDatatype::xnn_datatype_quint8:
    case XNNDatatype::xnn_datatype_qcint8:
    case XNNDatatype::xnn_datatype_qdint8:
    case XNNDatatype::xnn_datatype_qpint8:
      *size = 1;
      return true;
    case XNNDatatype::xnn_datatype_qcint4:
    case XNNDatatype::xnn_datatype_qbint4:
      *size = 0;
      return true;
    case XNNDatatype::xnn_datatype_invalid:
      return false;
  }
  return false;
}

// What Debian's 2022 XNNPACK can define a tensor value of (xnn_datatype in
// its xnnpack.h).
bool xnnpack_defines(XNNDatatype datatype) {
  switch (datatype) {
    case XNNDatatype::xnn_datatype_fp32:
    case XNNDatatype::xnn_datatype_fp16:
    case XNNDatatype::xnn_datatype_qint8:
    case XNNDatatype::xnn_datatype_quint8:
    case XNNDatatype::xnn_datatype_qint32:
    case XNNDatatype::xnn_datatype_qcint8:
    case XNNDatatype::xnn_datatype_qcint32:
      return true;
    default:
      return false;
  }
}

// The quantization scheme a datatype requires.
Quantization::Scheme scheme_of(XNNDatatype datatype) {
  switch (datatype) {
    case XNNDatatype::xnn_datatype_qint8:
    case XNNDatatype::xnn_datatype_quint8:
    case XNNDatatype::xnn_datatype_qint32:
      return Quantization::Scheme::PerTensor;
    case XNNDatatype::xnn_datatype_qcint8:
    case XNNDatatype::xnn_datatype_qcint32:
    case XNNDatatype::xnn_datatype_qcint4:
      return Quantization::Scheme::PerChannel;
    case XNNDatatype::xnn_datatype_qbint4:
      return Quantization::Scheme::PerChannelGroup;
    case XNNDatatype::xnn_datatype_qdint8:
      return Quantization::Scheme::PerTokenDynamic;
    default:
      return Quantization::Scheme::None;
  }
}

// The zero points a per-tensor datatype can hold: its integer range for
// 8-bit values, 0 for int32 biases (XNNPACK adds them unshifted) and for
// everything else.
void zero_point_range(XNNDatatype datatype, int32_t* lo, int32_t* hi) {
  *lo = *hi = 0;
  if (datatype == XNNDatatype::xnn_datatype_qint8) {
    *lo = -128;
    *hi = 127;
  } else if (datatype == XNNDatatype::xnn_datatype_quint8) {
    *hi = 255;
  }
}

const char* datatype_name(XNNDatatype datatype) {
  const char* name = fb_xnnpack::EnumNameXNNDatatype(datatype);
  return name[0] == '\0' ? "unknown" : name + sizeof("xnn_datatype_") - 1;
}

class GraphLoader {
 public:
  GraphLoader(const BlobView& blob, const NamedDataMap* named, Graph* out)
      : blob_(blob), named_(named), graph_(*out) {}

  Error load();

 private:
  Error read_values();
  Error read_value(size_t i, const fb_xnnpack::XValue* xvalue);
  Error read_quantization(size_t i,
                          const fb_xnnpack::XNNQuantizedTensorValue* q);
  // The bytes of constant_data entry `index`, checked to hold `nbytes`.
  Result<const void*> constant_bytes(uint32_t index,
                                     size_t nbytes,
                                     size_t value_index);
  Error read_externals();
  Error read_nodes();
  Error check_nodes();
  Error check_datatypes() const;
  // Copies constants XNNPACK reads in place into padded memory.
  void pad_constants();

  const BlobView& blob_;
  const NamedDataMap* named_;
  Graph& graph_;
  std::unordered_map<uint32_t, uint32_t> index_of_id_;
};

#define VALUE_CHECK(cond, error, i, fmt, ...)                     \
  ET_CHECK_OR_RETURN_ERROR(cond,                                  \
                           error,                                 \
                           "XNNPACK graph value %zu (id %u): " fmt, \
                           i,                                     \
                           graph_.values[i].id,                   \
                           ##__VA_ARGS__)

Error GraphLoader::read_values() {
  const auto* xvalues = blob_.graph->xvalues();
  const size_t count = xvalues == nullptr ? 0 : xvalues->size();
  ET_CHECK_OR_RETURN_ERROR(count > 0 && count < kNoValue,
                           InvalidProgram,
                           "XNNPACK graph: %zu values, expected 1 to %u",
                           count,
                           kNoValue - 1);
  graph_.values.assign(count, ValueInfo());
  for (size_t i = 0; i < count; ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(read_value(i, xvalues->Get(i)));
  }
  return Error::Ok;
}

Error GraphLoader::read_value(size_t i, const fb_xnnpack::XValue* xvalue) {
  const fb_xnnpack::XNNTensorValue* t = nullptr;
  const fb_xnnpack::XNNQuantizedTensorValue* q = nullptr;
  if (xvalue->xvalue_union_type() ==
      fb_xnnpack::XValueUnion::XNNQuantizedTensorValue) {
    q = xvalue->xvalue_union_as_XNNQuantizedTensorValue();
    t = q == nullptr ? nullptr : q->tensor_value();
  } else {
    t = xvalue->xvalue_union_as_XNNTensorValue();
  }
  ET_CHECK_OR_RETURN_ERROR(t != nullptr,
                           InvalidProgram,
                           "XNNPACK graph value %zu: no tensor value",
                           i);
  ValueInfo& info = graph_.values[i];
  info.id = t->id_out();
  VALUE_CHECK(index_of_id_.emplace(info.id, static_cast<uint32_t>(i)).second,
              InvalidProgram,
              i,
              "id_out repeats an earlier value's");
  info.datatype = t->datatype();
  VALUE_CHECK(element_size(info.datatype, &info.element_size),
              InvalidProgram,
              i,
              "datatype %d is not an XNNDatatype",
              static_cast<int>(info.datatype));
  VALUE_CHECK(t->dq_datatype() == XNNDatatype::xnn_datatype_invalid,
              NotSupported,
              i,
              "dq_datatype (an older blobs' form of dynamic quantization) is "
              "not supported; export the model again");
  if (t->dims() != nullptr) {
    info.dims.assign(t->dims()->begin(), t->dims()->end());
  }
  VALUE_CHECK(t->num_dims() == info.dims.size(),
              InvalidProgram,
              i,
              "num_dims %u but %zu dims",
              t->num_dims(),
              info.dims.size());
  VALUE_CHECK(info.dims.size() <= kMaxDims,
              NotSupported,
              i,
              "rank %zu exceeds %zu",
              info.dims.size(),
              kMaxDims);
  VALUE_CHECK(count_elements(info.dims, info.element_size, &info.numel),
              InvalidProgram,
              i,
              "element count overflows");
  // XNNPACK asserts on the null data of empty tensors.
  VALUE_CHECK(info.numel > 0,
              NotSupported,
              i,
              "empty tensors are not supported");
  info.max_dims = info.dims;
  info.max_numel = info.numel;

  const uint32_t flags = t->flags();
  VALUE_CHECK(flags <= XNN_VALUE_FLAG_EXTERNAL_OUTPUT &&
                  flags != (XNN_VALUE_FLAG_EXTERNAL_INPUT |
                            XNN_VALUE_FLAG_EXTERNAL_OUTPUT),
              InvalidProgram,
              i,
              "flags 0x%x, expected at most one of external input (1) and "
              "external output (2)",
              flags);
  if (flags == XNN_VALUE_FLAG_EXTERNAL_INPUT) {
    info.role = ValueInfo::Role::Input;
  } else if (flags == XNN_VALUE_FLAG_EXTERNAL_OUTPUT) {
    info.role = ValueInfo::Role::Output;
  }
  info.arg_index = t->external_id();

  if (q != nullptr) {
    ET_CHECK_OK_OR_RETURN_ERROR(read_quantization(i, q));
  }
  VALUE_CHECK(scheme_of(info.datatype) == info.quant.scheme,
              InvalidProgram,
              i,
              "datatype %s needs %s quantization parameters",
              datatype_name(info.datatype),
              scheme_of(info.datatype) == Quantization::Scheme::None
                  ? "no"
                  : "matching");
  int32_t zp_min = 0, zp_max = 0;
  zero_point_range(info.datatype, &zp_min, &zp_max);
  VALUE_CHECK(info.quant.zero_point >= zp_min &&
                  info.quant.zero_point <= zp_max,
              InvalidProgram,
              i,
              "zero point %d outside [%d, %d] of datatype %s",
              static_cast<int>(info.quant.zero_point),
              static_cast<int>(zp_min),
              static_cast<int>(zp_max),
              datatype_name(info.datatype));

  if (t->constant_buffer_idx() != 0) {
    VALUE_CHECK(info.role == ValueInfo::Role::Intermediate,
                InvalidProgram,
                i,
                "a constant cannot be an external input or output");
    VALUE_CHECK(info.element_size > 0,
                NotSupported,
                i,
                "constant of packed datatype %s",
                datatype_name(info.datatype));
    ET_UNWRAP(info.constant,
              constant_bytes(t->constant_buffer_idx(),
                             info.numel * info.element_size,
                             i));
    info.role = ValueInfo::Role::Constant;
  }
  return Error::Ok;
}

Error GraphLoader::read_quantization(
    size_t i,
    const fb_xnnpack::XNNQuantizedTensorValue* q) {
  Quantization& quant = graph_.values[i].quant;
  const Dims& dims = graph_.values[i].dims;
  switch (q->quant_params_type()) {
    case fb_xnnpack::XNNQuantParams::PerTensorQuant: {
      const auto* p = q->quant_params_as_PerTensorQuant();
      VALUE_CHECK(p != nullptr, InvalidProgram, i, "no PerTensorQuant table");
      quant.scheme = Quantization::Scheme::PerTensor;
      quant.scale = p->scale();
      quant.zero_point = p->zero_point();
      VALUE_CHECK(std::isfinite(quant.scale) && quant.scale > 0.0f,
                  InvalidProgram,
                  i,
                  "scale %g is not a positive number",
                  static_cast<double>(quant.scale));
      return Error::Ok;
    }
    case fb_xnnpack::XNNQuantParams::PerChannelQuant:
    case fb_xnnpack::XNNQuantParams::PerChannelGroupQuant: {
      const bool grouped = q->quant_params_type() ==
          fb_xnnpack::XNNQuantParams::PerChannelGroupQuant;
      const flatbuffers::Vector<float>* scale = nullptr;
      uint32_t buffer_idx = 0;
      uint32_t num_scales = 0;
      if (grouped) {
        const auto* p = q->quant_params_as_PerChannelGroupQuant();
        VALUE_CHECK(p != nullptr, InvalidProgram, i, "no quantization table");
        quant.scheme = Quantization::Scheme::PerChannelGroup;
        quant.channel_dim = static_cast<uint32_t>(p->channel_dim());
        quant.group_size = static_cast<uint32_t>(p->group_size());
        scale = p->scale();
        buffer_idx = p->scale_buffer_idx();
        num_scales = p->num_scales();
      } else {
        const auto* p = q->quant_params_as_PerChannelQuant();
        VALUE_CHECK(p != nullptr, InvalidProgram, i, "no quantization table");
        quant.scheme = Quantization::Scheme::PerChannel;
        quant.channel_dim = static_cast<uint32_t>(p->channel_dim());
        scale = p->scale();
        buffer_idx = p->scale_buffer_idx();
        num_scales = p->num_scales();
      }
      VALUE_CHECK(quant.channel_dim < dims.size(),
                  InvalidProgram,
                  i,
                  "channel_dim %u out of range for rank %zu",
                  quant.channel_dim,
                  dims.size());
      if (buffer_idx != 0) {
        // Scales in the constant data: fp32, or bf16 for group-wise.
        const size_t width = grouped ? 2 : 4;
        ET_UNWRAP(const void* bytes,
                  constant_bytes(buffer_idx, size_t{num_scales} * width, i));
        quant.scale_storage.resize(num_scales);
        for (uint32_t k = 0; k < num_scales; ++k) {
          uint32_t bits = 0;
          if (grouped) {
            uint16_t half = 0;
            std::memcpy(&half, static_cast<const uint8_t*>(bytes) + 2 * k, 2);
            bits = uint32_t{half} << 16;
          } else {
            std::memcpy(&bits, static_cast<const uint8_t*>(bytes) + 4 * k, 4);
          }
          std::memcpy(&quant.scale_storage[k], &bits, 4);
        }
        quant.scales = quant.scale_storage.data();
        quant.num_scales = num_scales;
      } else {
        VALUE_CHECK(scale != nullptr,
                    InvalidProgram,
                    i,
                    "per-channel quantization without scales");
        quant.scales = scale->data();
        quant.num_scales = scale->size();
      }
      for (size_t k = 0; k < quant.num_scales; ++k) {
        VALUE_CHECK(std::isfinite(quant.scales[k]) && quant.scales[k] > 0.0f,
                    InvalidProgram,
                    i,
                    "scale %zu (%g) is not a positive number",
                    k,
                    static_cast<double>(quant.scales[k]));
      }
      const size_t channels = dims[quant.channel_dim];
      if (grouped) {
        // [channels, groups] scales; each group covers group_size of the
        // other (input) dim of the 2-D weight.
        VALUE_CHECK(dims.size() == 2 && quant.group_size > 0 &&
                        dims[1 - quant.channel_dim] % quant.group_size == 0 &&
                        quant.num_scales ==
                            channels *
                                (dims[1 - quant.channel_dim] / quant.group_size),
                    InvalidProgram,
                    i,
                    "group-wise scales (%zu, group_size %u) do not tile the "
                    "weight",
                    quant.num_scales,
                    quant.group_size);
      } else {
        VALUE_CHECK(quant.num_scales == channels,
                    InvalidProgram,
                    i,
                    "%zu scales for %zu channels",
                    quant.num_scales,
                    channels);
      }
      return Error::Ok;
    }
    case fb_xnnpack::XNNQuantParams::PerTokenDynamicQuant: {
      const auto* p = q->quant_params_as_PerTokenDynamicQuant();
      VALUE_CHECK(p != nullptr, InvalidProgram, i, "no quantization table");
      quant.scheme = Quantization::Scheme::PerTokenDynamic;
      quant.num_nonbatch_dims = p->num_nonbatch_dims();
      VALUE_CHECK(quant.num_nonbatch_dims >= 1 &&
                      static_cast<size_t>(quant.num_nonbatch_dims) <=
                          dims.size(),
                  InvalidProgram,
                  i,
                  "num_nonbatch_dims %d outside [1, rank %zu]",
                  quant.num_nonbatch_dims,
                  dims.size());
      return Error::Ok;
    }
    default:
      VALUE_CHECK(false,
                  InvalidProgram,
                  i,
                  "unknown quantization parameters type %d",
                  static_cast<int>(q->quant_params_type()));
  }
  return Error::Ok;
}

Result<const void*> GraphLoader::constant_bytes(uint32_t index,
                                                size_t nbytes,
                                                size_t value_index) {
  const auto* table = blob_.graph->constant_data();
  const auto* legacy = blob_.graph->constant_buffer();
  const size_t i = value_index;
  if (table != nullptr && table->size() > 0) {
    VALUE_CHECK(index < table->size(),
                InvalidProgram,
                i,
                "constant_data index %u out of range (%u entries)",
                index,
                table->size());
    const auto* entry = table->Get(index);
    VALUE_CHECK(entry->size() >= nbytes,
                InvalidProgram,
                i,
                "constant_data[%u] has %llu bytes, the value needs %zu",
                index,
                static_cast<unsigned long long>(entry->size()),
                nbytes);
    if (entry->offset() != kNamedOffset) {
      VALUE_CHECK(entry->offset() <= blob_.constant_data_size &&
                      nbytes <= blob_.constant_data_size - entry->offset(),
                  InvalidProgram,
                  i,
                  "constant_data[%u] [offset %llu, %zu bytes] past the end of "
                  "the %zu-byte constant data",
                  index,
                  static_cast<unsigned long long>(entry->offset()),
                  nbytes,
                  blob_.constant_data_size);
      return static_cast<const void*>(blob_.constant_data + entry->offset());
    }
    const auto* key = entry->named_key();
    VALUE_CHECK(key != nullptr && key->size() > 0,
                InvalidProgram,
                i,
                "constant_data[%u] has neither an offset nor a named_key",
                index);
    VALUE_CHECK(named_ != nullptr,
                NotFound,
                i,
                "constant '%s' is stored as named data, but the program "
                "gives no named data (is a .ptd data file missing?)",
                key->c_str());
    Result<FreeableBuffer> data =
        named_->get_data(std::string_view(key->c_str(), key->size()));
    if (!data.ok()) {
      ET_LOG(Error,
             "XNNPACK graph value %zu (id %u): constant '%s' is not in the "
             "named data (error 0x%x; is the .ptd data file missing or "
             "another model's?)",
             i,
             graph_.values[i].id,
             key->c_str(),
             static_cast<unsigned>(data.error()));
      return data.error();
    }
    VALUE_CHECK(data->size() >= nbytes,
                InvalidProgram,
                i,
                "named data '%s' has %zu bytes, the value needs %zu",
                key->c_str(),
                data->size(),
                nbytes);
    const void* bytes = data->data();
    graph_.values[i].named_buffer = graph_.named_buffers.size();
    graph_.named_buffers.push_back(std::move(*data));
    return bytes;
  }
  // Older (XN00) blobs keep constants inside the flatbuffer.
  VALUE_CHECK(legacy != nullptr && index < legacy->size() &&
                  legacy->Get(index)->storage() != nullptr &&
                  legacy->Get(index)->storage()->size() >= nbytes,
              InvalidProgram,
              i,
              "constant_buffer_idx %u: no constant of %zu bytes there",
              index,
              nbytes);
  return static_cast<const void*>(legacy->Get(index)->storage()->data());
}

Error GraphLoader::read_externals() {
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  for (const ValueInfo& info : graph_.values) {
    num_inputs += info.role == ValueInfo::Role::Input ? 1 : 0;
    num_outputs += info.role == ValueInfo::Role::Output ? 1 : 0;
  }
  const auto* input_ids = blob_.graph->input_ids();
  const auto* output_ids = blob_.graph->output_ids();
  ET_CHECK_OR_RETURN_ERROR(
      (input_ids == nullptr ? 0 : input_ids->size()) == num_inputs &&
          (output_ids == nullptr ? 0 : output_ids->size()) == num_outputs,
      InvalidProgram,
      "XNNPACK graph: input_ids and output_ids list %u and %u values, but %zu "
      "and %zu values are flagged external inputs and outputs",
      input_ids == nullptr ? 0 : input_ids->size(),
      output_ids == nullptr ? 0 : output_ids->size(),
      num_inputs,
      num_outputs);
  for (const auto* ids : {input_ids, output_ids}) {
    for (uint32_t k = 0; ids != nullptr && k < ids->size(); ++k) {
      const auto it = index_of_id_.find(ids->Get(k));
      const bool is_input = ids == input_ids;
      ET_CHECK_OR_RETURN_ERROR(
          it != index_of_id_.end() &&
              graph_.values[it->second].role ==
                  (is_input ? ValueInfo::Role::Input
                            : ValueInfo::Role::Output),
          InvalidProgram,
          "XNNPACK graph: %s_ids[%u] = %u is not an external %s value",
          is_input ? "input" : "output",
          k,
          ids->Get(k),
          is_input ? "input" : "output");
    }
  }
  // external_id is the position in the delegate call's args: inputs take
  // [0, num_inputs), outputs the args after them, each arg exactly once.
  graph_.inputs.assign(num_inputs, kNoValue);
  graph_.outputs.assign(num_outputs, kNoValue);
  for (size_t i = 0; i < graph_.values.size(); ++i) {
    const ValueInfo& info = graph_.values[i];
    if (info.role != ValueInfo::Role::Input &&
        info.role != ValueInfo::Role::Output) {
      continue;
    }
    const bool is_input = info.role == ValueInfo::Role::Input;
    const size_t first = is_input ? 0 : num_inputs;
    std::vector<uint32_t>& slots = is_input ? graph_.inputs : graph_.outputs;
    const size_t slot = info.arg_index - first;
    VALUE_CHECK(
        info.arg_index >= first && slot < slots.size() && slots[slot] == kNoValue,
        InvalidProgram,
        i,
        "external_id %u is out of range or taken: %s use args %zu to %zu, "
        "each once",
        info.arg_index,
        is_input ? "inputs" : "outputs",
        first,
        first + slots.size() - 1);
    slots[slot] = static_cast<uint32_t>(i);
  }
  return Error::Ok;
}

#undef VALUE_CHECK

Error GraphLoader::read_nodes() {
  const auto* xnodes = blob_.graph->xnodes();
  const size_t count = xnodes == nullptr ? 0 : xnodes->size();
  graph_.nodes.assign(count, Node());
  for (size_t i = 0; i < count; ++i) {
    const auto* xnode = xnodes->Get(i);
    Node& node = graph_.nodes[i];
    node.kind = xnode->xnode_union_type();
    node.ops = node_ops(node.kind);
    ET_CHECK_OR_RETURN_ERROR(node.ops != nullptr,
                             InvalidProgram,
                             "XNNPACK graph node %zu: unknown node kind %d",
                             i,
                             static_cast<int>(node.kind));
    // The verifier accepts a union whose type is set but whose table is
    // absent.
    node.params = xnode->xnode_union();
    ET_CHECK_OR_RETURN_ERROR(node.params != nullptr,
                             InvalidProgram,
                             "XNNPACK graph node %zu (%s): no params table",
                             i,
                             node.ops->name);
    ET_CHECK_OK_OR_RETURN_ERROR(node.ops->read(node.params, &node, i));
    for (size_t k = 0; k < node.inputs.size() + node.outputs.size(); ++k) {
      const bool is_input = k < node.inputs.size();
      const size_t slot = is_input ? k : k - node.inputs.size();
      uint32_t& id = is_input ? node.inputs[slot] : node.outputs[slot];
      if (id == kNoValue && is_input &&
          (node.ops->optional_inputs >> slot & 1u) != 0) {
        continue;
      }
      const auto it = index_of_id_.find(id);
      ET_CHECK_OR_RETURN_ERROR(it != index_of_id_.end(),
                               InvalidProgram,
                               "XNNPACK graph node %zu (%s): %s %zu refers to "
                               "value id %u, which no value has",
                               i,
                               node.ops->name,
                               is_input ? "input" : "output",
                               slot,
                               id);
      id = it->second;
    }
    node.debug_handle = xnode->debug_handle();
    if (const auto* clamp = xnode->output_min_max()) {
      node.has_output_clamp = true;
      node.output_min = clamp->output_min();
      node.output_max = clamp->output_max();
      ET_CHECK_OR_RETURN_ERROR(node.ops->takes_output_clamp,
                               InvalidProgram,
                               "XNNPACK graph node %zu (%s): this kind takes no "
                               "output_min_max",
                               i,
                               node.ops->name);
      ET_CHECK_OR_RETURN_ERROR(
          !std::isnan(node.output_min) && !std::isnan(node.output_max) &&
              node.output_min <= node.output_max,
          InvalidProgram,
          "XNNPACK graph node %zu (%s): output_min_max [%g, %g] is empty",
          i,
          node.ops->name,
          static_cast<double>(node.output_min),
          static_cast<double>(node.output_max));
    }
  }
  return Error::Ok;
}

Error GraphLoader::check_nodes() {
  std::vector<bool> available(graph_.values.size());
  for (size_t v = 0; v < graph_.values.size(); ++v) {
    const ValueInfo::Role role = graph_.values[v].role;
    available[v] =
        role == ValueInfo::Role::Constant || role == ValueInfo::Role::Input;
  }
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    const NodeCheck check(graph_, node, i);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const uint32_t v = node.inputs[k];
      ET_NODE_CHECK(check,
                    v == kNoValue || available[v],
                    InvalidProgram,
                    "input %zu: value %u is not a constant, an external input "
                    "or an earlier node's output",
                    k,
                    v == kNoValue ? 0 : graph_.values[v].id);
    }
    std::vector<Dims> expected(node.outputs.size());
    ET_CHECK_OK_OR_RETURN_ERROR(node.ops->infer(check, expected.data()));
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const uint32_t v = node.outputs[k];
      const ValueInfo& out = graph_.values[v];
      ET_NODE_CHECK(check,
                    (out.role == ValueInfo::Role::Intermediate ||
                     out.role == ValueInfo::Role::Output) &&
                        !available[v],
                    InvalidProgram,
                    "output %zu: value %u is a constant, an input or already "
                    "produced",
                    k,
                    out.id);
      char want[96], got[96];
      ET_NODE_CHECK(check,
                    out.dims == expected[k],
                    InvalidProgram,
                    "output value %u has dims %s, expected %s",
                    out.id,
                    format_dims(out.dims, got, sizeof(got)),
                    format_dims(expected[k], want, sizeof(want)));
      available[v] = true;
    }
  }
  for (size_t j = 0; j < graph_.outputs.size(); ++j) {
    ET_CHECK_OR_RETURN_ERROR(available[graph_.outputs[j]],
                             InvalidProgram,
                             "XNNPACK graph: output %zu (value %u) is not "
                             "produced by any node",
                             j,
                             graph_.values[graph_.outputs[j]].id);
  }
  return Error::Ok;
}

Error GraphLoader::check_datatypes() const {
  // Named after the first node that uses the value, since that is what a
  // user can trace back to the model.
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (uint32_t v : *list) {
        if (v == kNoValue || xnnpack_defines(graph_.values[v].datatype)) {
          continue;
        }
        ET_LOG(Error,
               "XNNPACK graph node %zu (%s): value %u has datatype %s, which "
               "Debian's XNNPACK cannot run and this backend has no host "
               "kernel for",
               i,
               node.ops->name,
               graph_.values[v].id,
               datatype_name(graph_.values[v].datatype));
        return Error::NotSupported;
      }
    }
  }
  return Error::Ok;
}

void GraphLoader::pad_constants() {
  std::vector<bool> padded(graph_.values.size(), false);
  for (const Node& node : graph_.nodes) {
    if (node.ops->define == nullptr) {
      continue;
    }
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const uint32_t v = node.inputs[k];
      if (v == kNoValue || padded[v] ||
          graph_.values[v].role != ValueInfo::Role::Constant ||
          (node.ops->packed_inputs >> k & 1u) != 0) {
        continue;
      }
      ValueInfo& info = graph_.values[v];
      const size_t nbytes = info.numel * info.element_size;
      std::vector<uint8_t> copy(nbytes + kExtraBytes, 0);
      std::memcpy(copy.data(), info.constant, nbytes);
      info.constant = copy.data();
      graph_.owned_constants.push_back(std::move(copy));
      padded[v] = true;
    }
  }
}

Error GraphLoader::load() {
  ET_CHECK_OK_OR_RETURN_ERROR(read_values());
  ET_CHECK_OK_OR_RETURN_ERROR(read_externals());
  ET_CHECK_OK_OR_RETURN_ERROR(read_nodes());
  ET_CHECK_OK_OR_RETURN_ERROR(check_nodes());
  ET_CHECK_OK_OR_RETURN_ERROR(check_datatypes());
  pad_constants();
  return Error::Ok;
}

} // namespace

const char* format_dims(const Dims& dims, char* buffer, size_t size) {
  size_t used = 0;
  buffer[0] = '\0';
  for (size_t i = 0; i <= dims.size() && used < size; ++i) {
    const char* sep = i == 0 ? "[" : ", ";
    const int n =
        i < dims.size()
            ? std::snprintf(buffer + used, size - used, "%s%zu", sep, dims[i])
            : std::snprintf(
                  buffer + used, size - used, dims.empty() ? "[]" : "]");
    if (n < 0) {
      break;
    }
    used += static_cast<size_t>(n);
  }
  return buffer;
}

bool count_elements(const Dims& dims, size_t element_size, size_t* numel) {
  *numel = 1;
  for (size_t d : dims) {
    if (__builtin_mul_overflow(*numel, d, numel)) {
      return false;
    }
  }
  const size_t width = element_size == 0 ? 1 : element_size;
  return *numel <= std::numeric_limits<size_t>::max() / width - kExtraBytes;
}

Error load_graph(const BlobView& blob,
                 const NamedDataMap* named_data_map,
                 Graph* out) {
  return GraphLoader(blob, named_data_map, out).load();
}

Error infer_dims(Graph* graph) {
  for (uint32_t v : graph->inputs) {
    ValueInfo& info = graph->values[v];
    // The caller checked the dims against max_dims.
    (void)count_elements(info.dims, info.element_size, &info.numel);
  }
  std::vector<Dims> dims;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const Node& node = graph->nodes[i];
    dims.assign(node.outputs.size(), Dims());
    // The node's log line says which sizes do not fit; at run time that is
    // the caller's inputs, not the blob.
    ET_CHECK_OR_RETURN_ERROR(
        node.ops->infer(NodeCheck(*graph, node, i), dims.data()) == Error::Ok,
        InvalidArgument,
        "XNNPACK graph node %zu (%s): the inputs' sizes do not fit it",
        i,
        node.ops->name);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      ValueInfo& info = graph->values[node.outputs[k]];
      size_t numel = 0;
      char got[96], bound[96];
      ET_CHECK_OR_RETURN_ERROR(
          dims[k].size() == info.max_dims.size() &&
              count_elements(dims[k], info.element_size, &numel) &&
              numel >= 1 && numel <= info.max_numel,
          InvalidArgument,
          "XNNPACK graph node %zu (%s): output value %u would have dims %s, "
          "outside 1 to the %zu elements of its declared dims %s",
          i,
          node.ops->name,
          info.id,
          format_dims(dims[k], got, sizeof(got)),
          info.max_numel,
          format_dims(info.max_dims, bound, sizeof(bound)));
      info.dims = std::move(dims[k]);
      info.numel = numel;
    }
  }
  return Error::Ok;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
