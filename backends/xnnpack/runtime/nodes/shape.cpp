// Kinds that move data without arithmetic: reshape and copy, constant
// padding (XNNPACK), and transpose, slice and concatenation, which Debian's
// 2022 XNNPACK has no subgraph node for and which run on the host for any
// element size.
//
// Dynamic shapes (extensions of upstream's format, see schema.fbs): a
// reshape's dim_sources say where each output size comes from at run time,
// a slice's modes whether a window follows the end of its dim. Without
// them, a reshape infers the one dim whose new_shape entry is 0 (as
// upstream's XNNPACK does) and keeps the others, and a slice is fixed.

#include <cstring>

#include <executorch/backends/xnnpack/runtime/host_util.h>
#include <executorch/backends/xnnpack/runtime/node_ops.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::DimSource;
using fb_xnnpack::SliceMode;
using fb_xnnpack::XNodeUnion;
using runtime::Error;

namespace {

constexpr uint32_t kMaxDims32 = static_cast<uint32_t>(kMaxDims);

// Reads a per-dim vector of a table, checking it has `expected` entries.
template <typename T>
Error check_count(const flatbuffers::Vector<T>* v,
                  uint32_t expected,
                  const char* what,
                  const char* kind,
                  size_t index) {
  // Inference reads the vector: a missing one is refused even when no
  // entries are expected.
  ET_CHECK_OR_RETURN_ERROR(v != nullptr,
                           InvalidProgram,
                           "XNNPACK graph node %zu (%s): %s is missing",
                           index,
                           kind,
                           what);
  const uint32_t n = v->size();
  ET_CHECK_OR_RETURN_ERROR(n == expected,
                           InvalidProgram,
                           "XNNPACK graph node %zu (%s): %s has %u entries, "
                           "expected %u",
                           index,
                           kind,
                           what,
                           n,
                           expected);
  return Error::Ok;
}

// Reshape --------------------------------------------------------------------

Error read_reshape(const void* table, Node* node, size_t index) {
  const auto* t = static_cast<const fb_xnnpack::XNNStaticReshape*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  ET_CHECK_OR_RETURN_ERROR(t->num_dims() <= kMaxDims32,
                           InvalidProgram,
                           "XNNPACK graph node %zu (static_reshape): num_dims "
                           "%u exceeds %zu",
                           index,
                           t->num_dims(),
                           kMaxDims);
  ET_CHECK_OK_OR_RETURN_ERROR(check_count(
      t->new_shape(), t->num_dims(), "new_shape", "static_reshape", index));
  if (t->dim_sources() != nullptr) {
    ET_CHECK_OK_OR_RETURN_ERROR(check_count(t->dim_sources(),
                                            t->num_dims(),
                                            "dim_sources",
                                            "static_reshape",
                                            index));
  }
  return Error::Ok;
}

Error infer_reshape(const NodeCheck& check, Dims* outputs) {
  const auto* p = check.params<fb_xnnpack::XNNStaticReshape>();
  const auto* sources = p->dim_sources();
  const Dims& x = check.in(0);
  const size_t in_numel = check.input(0).numel;
  Dims& out = outputs[0];
  out.assign(p->new_shape()->begin(), p->new_shape()->end());
  size_t inferred = out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    const int32_t source = sources == nullptr
        ? (out[i] == 0 ? static_cast<int32_t>(DimSource::inferred)
                       : static_cast<int32_t>(DimSource::keep))
        : sources->Get(i);
    if (source >= 0) {
      ET_NODE_CHECK(check,
                    static_cast<size_t>(source) < x.size(),
                    InvalidProgram,
                    "dim_sources[%zu] = %d: the input has rank %zu",
                    i,
                    source,
                    x.size());
      out[i] = x[source];
    } else if (source == static_cast<int32_t>(DimSource::inferred)) {
      ET_NODE_CHECK(check,
                    inferred == out.size(),
                    InvalidProgram,
                    "dims %zu and %zu are both inferred",
                    inferred,
                    i);
      inferred = i;
      out[i] = 1;
    } else {
      ET_NODE_CHECK(check,
                    source == static_cast<int32_t>(DimSource::keep),
                    InvalidProgram,
                    "dim_sources[%zu] = %d is neither an input dim, -1 nor -2",
                    i,
                    source);
    }
  }
  size_t numel = 1;
  ET_NODE_CHECK(check,
                count_elements(out, check.input(0).element_size, &numel),
                InvalidProgram,
                "new_shape element count overflows");
  if (inferred < out.size()) {
    ET_NODE_CHECK(check,
                  numel > 0 && in_numel % numel == 0,
                  InvalidProgram,
                  "cannot infer dim %zu: the input's %zu elements are not a "
                  "multiple of the other dims' %zu",
                  inferred,
                  in_numel,
                  numel);
    out[inferred] = in_numel / numel;
    numel = in_numel;
  }
  ET_NODE_CHECK(check,
                numel == in_numel,
                InvalidProgram,
                "new_shape has %zu elements, the input %zu",
                numel,
                in_numel);
  // A rank-0 result is declared [1], as upstream declares scalars.
  if (out.empty()) {
    out = {1};
  }
  return Error::Ok;
}

// Reshape and copy both define a reshape to the output's current dims.
xnn_status define_reshape(xnn_subgraph_t subgraph,
                          const Graph& graph,
                          const Node& node) {
  const Dims& shape = graph.values[node.outputs[0]].dims;
  return xnn_define_static_reshape(
      subgraph, shape.size(), shape.data(), node.inputs[0], node.outputs[0], 0);
}

// Constant padding -------------------------------------------------------------

Error read_pad(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::XNNStaticConstantPad*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error infer_pad(const NodeCheck& check, Dims* outputs) {
  const auto* p = check.params<fb_xnnpack::XNNStaticConstantPad>();
  const Dims& x = check.in(0);
  const uint32_t rank = static_cast<uint32_t>(x.size());
  ET_CHECK_OK_OR_RETURN_ERROR(check_count(
      p->pre_paddings(), rank, "pre_paddings", check.name(), check.index()));
  ET_CHECK_OK_OR_RETURN_ERROR(check_count(
      p->post_paddings(), rank, "post_paddings", check.name(), check.index()));
  outputs[0] = x;
  for (size_t i = 0; i < x.size(); ++i) {
    outputs[0][i] +=
        size_t{p->pre_paddings()->Get(i)} + p->post_paddings()->Get(i);
  }
  return Error::Ok;
}

xnn_status define_pad(xnn_subgraph_t subgraph,
                      const Graph& /*graph*/,
                      const Node& node) {
  const auto* p = static_cast<const fb_xnnpack::XNNStaticConstantPad*>(
      node.params);
  size_t pre[kMaxDims] = {};
  size_t post[kMaxDims] = {};
  for (size_t d = 0; d < p->pre_paddings()->size(); ++d) {
    pre[d] = p->pre_paddings()->Get(d);
    post[d] = p->post_paddings()->Get(d);
  }
  return xnn_define_static_constant_pad(subgraph,
                                        pre,
                                        post,
                                        p->padding_value(),
                                        node.inputs[0],
                                        node.outputs[0],
                                        0);
}

// Host data movement -------------------------------------------------------------

// Data movement copies bytes, so inputs and output must hold the same
// datatype with the same quantization.
Error require_same_encoding(const NodeCheck& check) {
  const ValueInfo& out = check.output(0);
  for (size_t i = 0; i < check.num_inputs(); ++i) {
    const ValueInfo& in = check.input(i);
    ET_NODE_CHECK(
        check,
        in.datatype == out.datatype && in.element_size > 0 &&
            in.quant.scheme == out.quant.scheme &&
            in.quant.scale == out.quant.scale &&
            in.quant.zero_point == out.quant.zero_point,
        NotSupported,
        "input %zu and the output differ in datatype or quantization "
        "(this kind copies bytes)",
        i);
  }
  return Error::Ok;
}

Error read_transpose(const void* table, Node* node, size_t index) {
  const auto* t = static_cast<const fb_xnnpack::XNNStaticTranspose*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  ET_CHECK_OR_RETURN_ERROR(t->num_dims() <= kMaxDims32,
                           InvalidProgram,
                           "XNNPACK graph node %zu (static_transpose): num_dims "
                           "%u exceeds %zu",
                           index,
                           t->num_dims(),
                           kMaxDims);
  return check_count(
      t->perm(), t->num_dims(), "perm", "static_transpose", index);
}

Error infer_transpose(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(require_same_encoding(check));
  const auto* perm = check.params<fb_xnnpack::XNNStaticTranspose>()->perm();
  const Dims& x = check.in(0);
  ET_NODE_CHECK(check,
                perm->size() == x.size(),
                InvalidProgram,
                "perm has %u entries, expected %zu",
                perm->size(),
                x.size());
  outputs[0].assign(x.size(), 0);
  uint32_t seen = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t p = perm->Get(i);
    ET_NODE_CHECK(check,
                  p < x.size() && (seen >> p & 1u) == 0,
                  InvalidProgram,
                  "perm[%zu] = %u: not a permutation of %zu dims",
                  i,
                  p,
                  x.size());
    seen |= 1u << p;
    outputs[0][i] = x[p];
  }
  return Error::Ok;
}

Error run_transpose(const HostContext& context, const Node& node) {
  const ValueInfo& in = context.graph.values[node.inputs[0]];
  const ValueInfo& out = context.graph.values[node.outputs[0]];
  const auto* perm =
      static_cast<const fb_xnnpack::XNNStaticTranspose*>(node.params)->perm();
  size_t strides[kMaxDims];
  size_t step[kMaxDims];
  row_major_strides(in.dims, strides);
  for (size_t i = 0; i < perm->size(); ++i) {
    step[i] = strides[perm->Get(i)];
  }
  gather(context.data[node.inputs[0]],
         0,
         step,
         out.dims,
         in.element_size,
         context.data[node.outputs[0]],
         context.pool);
  return Error::Ok;
}

Error read_slice(const void* table, Node* node, size_t index) {
  const auto* t = static_cast<const fb_xnnpack::XNNStaticSlice*>(table);
  node->inputs = {t->input_id()};
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  ET_CHECK_OR_RETURN_ERROR(t->num_dims() <= kMaxDims32,
                           InvalidProgram,
                           "XNNPACK graph node %zu (static_slice): num_dims "
                           "%u exceeds %zu",
                           index,
                           t->num_dims(),
                           kMaxDims);
  ET_CHECK_OK_OR_RETURN_ERROR(
      check_count(t->offsets(), t->num_dims(), "offsets", "static_slice", index));
  ET_CHECK_OK_OR_RETURN_ERROR(
      check_count(t->sizes(), t->num_dims(), "sizes", "static_slice", index));
  if (t->modes() != nullptr) {
    ET_CHECK_OK_OR_RETURN_ERROR(
        check_count(t->modes(), t->num_dims(), "modes", "static_slice", index));
    for (uint32_t d = 0; d < t->num_dims(); ++d) {
      ET_CHECK_OR_RETURN_ERROR(t->modes()->Get(d) <= SliceMode::MAX,
                               InvalidProgram,
                               "XNNPACK graph node %zu (static_slice): "
                               "modes[%u] = %d is not a slice mode",
                               index,
                               d,
                               static_cast<int>(t->modes()->Get(d)));
    }
  }
  return Error::Ok;
}

// The window of dim `d` in an input dim of `n` elements: its first element
// and size under the dim's mode. False when it does not fit.
bool slice_window(const fb_xnnpack::XNNStaticSlice* p,
                  size_t d,
                  size_t n,
                  size_t* offset,
                  size_t* size) {
  const SliceMode mode =
      p->modes() == nullptr ? SliceMode::fixed : p->modes()->Get(d);
  const size_t given_offset = p->offsets()->Get(d);
  const size_t given_size = p->sizes()->Get(d);
  if (given_offset > n) {
    return false;
  }
  switch (mode) {
    case SliceMode::fixed:
      *offset = given_offset;
      *size = given_size;
      return given_size <= n - given_offset;
    case SliceMode::to_end:
      *offset = given_offset;
      *size = n - given_offset;
      return true;
    case SliceMode::from_end:
      *offset = n - given_offset;
      *size = given_size;
      return given_size <= given_offset;
  }
  return false;
}

Error infer_slice(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(require_same_encoding(check));
  const auto* p = check.params<fb_xnnpack::XNNStaticSlice>();
  const Dims& x = check.in(0);
  ET_NODE_CHECK(check,
                p->num_dims() == x.size(),
                InvalidProgram,
                "num_dims %u, but the input has rank %zu",
                p->num_dims(),
                x.size());
  outputs[0].assign(x.size(), 0);
  for (size_t d = 0; d < x.size(); ++d) {
    size_t offset = 0;
    ET_NODE_CHECK(check,
                  slice_window(p, d, x[d], &offset, &outputs[0][d]),
                  InvalidProgram,
                  "dim %zu: offset %u and size %u do not fit the input's %zu",
                  d,
                  p->offsets()->Get(d),
                  p->sizes()->Get(d),
                  x[d]);
  }
  return Error::Ok;
}

Error run_slice(const HostContext& context, const Node& node) {
  const ValueInfo& in = context.graph.values[node.inputs[0]];
  const ValueInfo& out = context.graph.values[node.outputs[0]];
  const auto* p = static_cast<const fb_xnnpack::XNNStaticSlice*>(node.params);
  size_t strides[kMaxDims];
  row_major_strides(in.dims, strides);
  size_t base = 0;
  for (size_t d = 0; d < in.dims.size(); ++d) {
    size_t offset = 0, size = 0;
    // infer_slice accepted the window at the input's current dims.
    (void)slice_window(p, d, in.dims[d], &offset, &size);
    base += offset * strides[d];
  }
  gather(context.data[node.inputs[0]],
         base,
         strides,
         out.dims,
         in.element_size,
         context.data[node.outputs[0]],
         context.pool);
  return Error::Ok;
}

// The number of inputs of each concatenate kind.
size_t concat_arity(XNodeUnion kind) {
  switch (kind) {
    case XNodeUnion::XNNConcatenate2:
      return 2;
    case XNodeUnion::XNNConcatenate3:
      return 3;
    case XNodeUnion::XNNConcatenate4:
      return 4;
    default:
      return 5;
  }
}

Error read_concatenate(const void* table, Node* node, size_t /*index*/) {
  const auto* t = static_cast<const fb_xnnpack::_XNNCat*>(table);
  const uint32_t ids[] = {t->input1_id(),
                          t->input2_id(),
                          t->input3_id(),
                          t->input4_id(),
                          t->input5_id()};
  node->inputs.assign(ids, ids + concat_arity(node->kind));
  node->outputs = {t->output_id()};
  node->flags = t->flags();
  return Error::Ok;
}

Error infer_concatenate(const NodeCheck& check, Dims* outputs) {
  ET_CHECK_OK_OR_RETURN_ERROR(require_same_encoding(check));
  const uint32_t axis = check.params<fb_xnnpack::_XNNCat>()->axis();
  Dims& out = outputs[0];
  out = check.in(0);
  ET_NODE_CHECK(check,
                axis < out.size(),
                InvalidProgram,
                "axis %u out of range for rank %zu",
                axis,
                out.size());
  for (size_t i = 1; i < check.num_inputs(); ++i) {
    const Dims& x = check.in(i);
    bool same = x.size() == out.size();
    for (size_t d = 0; same && d < x.size(); ++d) {
      same = d == axis || x[d] == out[d];
    }
    ET_NODE_CHECK(check,
                  same,
                  InvalidProgram,
                  "input %zu differs from input 0 outside axis %u",
                  i,
                  axis);
    out[axis] += x[axis];
  }
  return Error::Ok;
}

Error run_concatenate(const HostContext& context, const Node& node) {
  const size_t axis =
      static_cast<const fb_xnnpack::_XNNCat*>(node.params)->axis();
  const ValueInfo& out_info = context.graph.values[node.outputs[0]];
  const size_t width = out_info.element_size;
  const size_t outer = product(out_info.dims, 0, axis);
  auto* out = static_cast<uint8_t*>(context.data[node.outputs[0]]);
  for (size_t o = 0; o < outer; ++o) {
    for (uint32_t v : node.inputs) {
      const Dims& dims = context.graph.values[v].dims;
      const size_t chunk = product(dims, axis, dims.size()) * width;
      std::memcpy(
          out, static_cast<const uint8_t*>(context.data[v]) + o * chunk, chunk);
      out += chunk;
    }
  }
  return Error::Ok;
}

} // namespace

// clang-format off
extern const NodeOps kStaticReshapeOps = {"static_reshape", read_reshape, infer_reshape, define_reshape, nullptr, false, 0, 0};
extern const NodeOps kCopyOps = {"copy", read_node_1x1, infer_same_as_input, define_reshape, nullptr, false, 0, 0};
extern const NodeOps kStaticConstantPadOps = {"static_constant_pad", read_pad, infer_pad, define_pad, nullptr, false, 0, 0};
extern const NodeOps kStaticTransposeOps = {"static_transpose", read_transpose, infer_transpose, nullptr, run_transpose, false, 0, 0};
extern const NodeOps kStaticSliceOps = {"static_slice", read_slice, infer_slice, nullptr, run_slice, false, 0, 0};
extern const NodeOps kConcatenate2Ops = {"concatenate2", read_concatenate, infer_concatenate, nullptr, run_concatenate, false, 0, 0};
extern const NodeOps kConcatenate3Ops = {"concatenate3", read_concatenate, infer_concatenate, nullptr, run_concatenate, false, 0, 0};
extern const NodeOps kConcatenate4Ops = {"concatenate4", read_concatenate, infer_concatenate, nullptr, run_concatenate, false, 0, 0};
extern const NodeOps kConcatenate5Ops = {"concatenate5", read_concatenate, infer_concatenate, nullptr, run_concatenate, false, 0, 0};
// clang-format on

} // namespace xnnpack
} // namespace backends
} // namespace executorch
