#include <executorch/backends/xnnpack/runtime/graph_check.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include <executorch/backends/xnnpack/runtime/node_traits.h>
#include <executorch/backends/xnnpack/xnnpack_graph_generated.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using runtime::Error;
using xnnpack_graph::NodeKind;
using Dims = std::vector<size_t>;

namespace {

constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();

// "[a, b, c]" into `buffer`, for log lines.
const char* format_dims(const Dims& dims, char* buffer, size_t size) {
  size_t used = 0;
  buffer[0] = '\0';
  for (size_t i = 0; i <= dims.size() && used < size; ++i) {
    const char* sep = i == 0 ? "[" : ", ";
    int n =
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

// The element count of `dims`; false when it overflows the bytes of fp32
// data.
bool count_elements(const Dims& dims, size_t* numel) {
  *numel = 1;
  for (size_t d : dims) {
    if (__builtin_mul_overflow(*numel, d, numel)) {
      return false;
    }
  }
  return *numel <= std::numeric_limits<size_t>::max() / sizeof(float);
}

template <typename T>
Dims to_dims(const flatbuffers::Vector<T>* v) {
  Dims dims;
  if (v != nullptr) {
    dims.assign(v->begin(), v->end());
  }
  return dims;
}

Error check_values(const BlobView& blob, CheckedGraph* out) {
  const auto* values = blob.graph->values();
  const size_t count = values == nullptr ? 0 : values->size();
  ET_CHECK_OR_RETURN_ERROR(count > 0 && count < kUnset,
                           InvalidProgram,
                           "XNNPACK graph: %zu values, expected 1 to %u",
                           count,
                           kUnset - 1);
  out->values.assign(count, ValueInfo());
  size_t num_inputs = 0;
  for (size_t i = 0; i < count; ++i) {
    const auto* v = values->Get(i);
    ValueInfo& info = out->values[i];
    ET_CHECK_OR_RETURN_ERROR(
        v->datatype() == xnnpack_graph::DataType::fp32,
        NotSupported,
        "XNNPACK graph value %zu: datatype %s is not supported (fp32 only)",
        i,
        xnnpack_graph::EnumNameDataType(v->datatype()));
    ET_CHECK_OR_RETURN_ERROR(
        v->quantization_type() == xnnpack_graph::Quantization::NONE,
        InvalidProgram,
        "XNNPACK graph value %zu: quantization parameters on an fp32 value",
        i);
    info.dims = to_dims(v->dims());
    ET_CHECK_OR_RETURN_ERROR(info.dims.size() <= kMaxDims,
                             NotSupported,
                             "XNNPACK graph value %zu: rank %zu exceeds %zu",
                             i,
                             info.dims.size(),
                             kMaxDims);
    ET_CHECK_OR_RETURN_ERROR(count_elements(info.dims, &info.numel),
                             InvalidProgram,
                             "XNNPACK graph value %zu: element count overflows",
                             i);
    info.max_dims = info.dims;
    info.max_numel = info.numel;
    // XNNPACK asserts on the null data of empty tensors.
    ET_CHECK_OR_RETURN_ERROR(info.numel > 0,
                             NotSupported,
                             "XNNPACK graph value %zu: empty tensors are not "
                             "supported",
                             i);
    const uint32_t flags = static_cast<uint32_t>(v->flags());
    const uint32_t in_flag =
        static_cast<uint32_t>(xnnpack_graph::ValueFlags::external_input);
    const uint32_t out_flag =
        static_cast<uint32_t>(xnnpack_graph::ValueFlags::external_output);
    ET_CHECK_OR_RETURN_ERROR(
        flags == 0 || flags == in_flag || flags == out_flag,
        InvalidProgram,
        "XNNPACK graph value %zu: flags 0x%x, expected at most one of "
        "external_input and external_output",
        i,
        flags);
    if (v->constant() != nullptr) {
      const uint64_t offset = v->constant()->offset();
      const uint64_t size = v->constant()->size();
      ET_CHECK_OR_RETURN_ERROR(flags == 0,
                               InvalidProgram,
                               "XNNPACK graph value %zu: a constant cannot be "
                               "an external input or output",
                               i);
      ET_CHECK_OR_RETURN_ERROR(
          offset <= blob.constant_data_size &&
              size <= blob.constant_data_size - offset,
          InvalidProgram,
          "XNNPACK graph value %zu: constant [offset %llu, size %llu] past "
          "the end of the %zu-byte constant data",
          i,
          static_cast<unsigned long long>(offset),
          static_cast<unsigned long long>(size),
          blob.constant_data_size);
      ET_CHECK_OR_RETURN_ERROR(
          size == info.numel * sizeof(float) && offset % sizeof(float) == 0,
          InvalidProgram,
          "XNNPACK graph value %zu: constant of %llu bytes at offset %llu, "
          "expected %zu bytes at a multiple of %zu",
          i,
          static_cast<unsigned long long>(size),
          static_cast<unsigned long long>(offset),
          info.numel * sizeof(float),
          sizeof(float));
      info.role = ValueInfo::Role::Constant;
      info.constant = blob.constant_data + offset;
    } else if (flags == in_flag) {
      info.role = ValueInfo::Role::Input;
      ++num_inputs;
    } else if (flags == out_flag) {
      info.role = ValueInfo::Role::Output;
    }
    info.arg_index = v->external_index();
    const auto* dynamic = v->dynamic_dims();
    if (dynamic != nullptr && dynamic->size() > 0) {
      ET_CHECK_OR_RETURN_ERROR(info.role == ValueInfo::Role::Input,
                               InvalidProgram,
                               "XNNPACK graph value %zu: dynamic_dims on a "
                               "value that is not an external input",
                               i);
      for (size_t k = 0; k < dynamic->size(); ++k) {
        const uint32_t d = dynamic->Get(k);
        ET_CHECK_OR_RETURN_ERROR(
            d < info.dims.size() && (info.dynamic_dims >> d & 1u) == 0,
            InvalidProgram,
            "XNNPACK graph value %zu: dynamic_dims[%zu] = %u is not a dim of "
            "the rank-%zu value, or repeats one",
            i,
            k,
            d,
            info.dims.size());
        info.dynamic_dims |= 1u << d;
      }
      out->dynamic = true;
    }
  }
  // Inputs take args [0, num_inputs) and outputs the args after them, each
  // arg exactly once.
  out->inputs.assign(num_inputs, kUnset);
  size_t num_outputs = 0;
  for (const ValueInfo& info : out->values) {
    num_outputs += info.role == ValueInfo::Role::Output ? 1 : 0;
  }
  out->outputs.assign(num_outputs, kUnset);
  for (size_t i = 0; i < count; ++i) {
    const ValueInfo& info = out->values[i];
    if (info.role != ValueInfo::Role::Input &&
        info.role != ValueInfo::Role::Output) {
      continue;
    }
    const bool is_input = info.role == ValueInfo::Role::Input;
    const size_t first = is_input ? 0 : num_inputs;
    std::vector<uint32_t>& slots = is_input ? out->inputs : out->outputs;
    const size_t slot = info.arg_index - first;
    ET_CHECK_OR_RETURN_ERROR(
        info.arg_index >= first && slot < slots.size() && slots[slot] == kUnset,
        InvalidProgram,
        "XNNPACK graph value %zu: external_index %u is out of range or "
        "taken: %s use args %zu to %zu, each once",
        i,
        info.arg_index,
        is_input ? "inputs" : "outputs",
        first,
        first + slots.size() - 1);
    slots[slot] = static_cast<uint32_t>(i);
  }
  return Error::Ok;
}

// Output size of one spatial dim of a convolution or pooling window; false
// when the padded input is smaller than the window.
bool window_out(size_t in,
                uint32_t pad_a,
                uint32_t pad_b,
                uint32_t kernel,
                uint32_t stride,
                uint32_t dilation,
                size_t* out) {
  const uint64_t padded = uint64_t(in) + pad_a + pad_b;
  const uint64_t window = uint64_t(kernel - 1) * dilation + 1;
  if (padded < window) {
    return false;
  }
  *out = static_cast<size_t>((padded - window) / stride + 1);
  return true;
}

// Checks node inputs against each other and the params, and computes the
// output dims. One instance per node.
class NodeChecker {
 public:
  NodeChecker(const CheckedGraph& graph,
              const xnnpack_graph::Node* node,
              size_t index)
      : graph_(graph),
        node_(node),
        index_(index),
        name_(xnnpack_graph::EnumNameNodeKind(node->kind())) {}

  // Checks the node's kind, params and wiring against the values produced
  // so far (`available`), then its output dims; marks its output produced.
  Error check(std::vector<bool>* available);

  // The output dims the node's inputs (at their current dims) and params
  // produce.
  Error infer(Dims* out);

 private:
  const Dims& in(size_t i) const {
    return graph_.values[node_->inputs()->Get(i)].dims;
  }
  bool is_constant(size_t i) const {
    return graph_.values[node_->inputs()->Get(i)].role ==
           ValueInfo::Role::Constant;
  }
  size_t num_inputs() const {
    return node_->inputs()->size();
  }

  Error conv(Dims* out);
  Error pool(Dims* out);
  Error fully_connected(Dims* out);
  Error broadcast(Dims* out);
  Error concatenate(Dims* out);
  Error transpose(Dims* out);
  Error reshape(Dims* out);
  Error slice(Dims* out);
  Error pad(Dims* out);
  Error batch_matmul(Dims* out);
  Error rank4(const char* what) const;

  const CheckedGraph& graph_;
  const xnnpack_graph::Node* node_;
  size_t index_;
  const char* name_;
};

#define NODE_CHECK(cond, error, fmt, ...)                       \
  ET_CHECK_OR_RETURN_ERROR(cond,                                \
                           error,                               \
                           "XNNPACK graph node %zu (%s): " fmt, \
                           index_,                              \
                           name_,                               \
                           ##__VA_ARGS__)

Error NodeChecker::rank4(const char* what) const {
  NODE_CHECK(in(0).size() == 4,
             InvalidProgram,
             "%s input must be 4-D, got rank %zu",
             what,
             in(0).size());
  return Error::Ok;
}

Error NodeChecker::conv(Dims* out) {
  const auto* p = node_->params_as_Conv2dParams();
  ET_CHECK_OK_OR_RETURN_ERROR(rank4("NHWC"));
  NODE_CHECK(p->kernel_height() >= 1 && p->kernel_width() >= 1 &&
                 p->stride_height() >= 1 && p->stride_width() >= 1 &&
                 p->dilation_height() >= 1 && p->dilation_width() >= 1 &&
                 p->groups() >= 1 && p->group_input_channels() >= 1 &&
                 p->group_output_channels() >= 1,
             InvalidProgram,
             "kernel, stride, dilation, groups and channels must be >= 1");
  const Dims& x = in(0);
  const size_t out_channels = size_t(p->groups()) * p->group_output_channels();
  NODE_CHECK(x[3] == size_t(p->groups()) * p->group_input_channels(),
             InvalidProgram,
             "input has %zu channels, expected groups %u x "
             "group_input_channels %u",
             x[3],
             p->groups(),
             p->group_input_channels());
  const bool depthwise = p->depthwise();
  NODE_CHECK(!depthwise || (node_->kind() == NodeKind::conv2d &&
                            p->group_input_channels() == 1),
             InvalidProgram,
             "depthwise needs conv2d with group_input_channels 1");
  const Dims filter =
      depthwise ? Dims{1, p->kernel_height(), p->kernel_width(), out_channels}
                : Dims{out_channels,
                       p->kernel_height(),
                       p->kernel_width(),
                       p->group_input_channels()};
  char want[96], got[96];
  NODE_CHECK(in(1) == filter,
             InvalidProgram,
             "filter dims %s, expected %s",
             format_dims(in(1), got, sizeof(got)),
             format_dims(filter, want, sizeof(want)));
  NODE_CHECK(num_inputs() < 3 || in(2) == Dims{out_channels},
             InvalidProgram,
             "bias dims %s, expected [%zu]",
             format_dims(in(2), got, sizeof(got)),
             out_channels);
  size_t oh = 0, ow = 0;
  if (node_->kind() == NodeKind::conv2d) {
    NODE_CHECK(window_out(x[1],
                          p->padding_top(),
                          p->padding_bottom(),
                          p->kernel_height(),
                          p->stride_height(),
                          p->dilation_height(),
                          &oh) &&
                   window_out(x[2],
                              p->padding_left(),
                              p->padding_right(),
                              p->kernel_width(),
                              p->stride_width(),
                              p->dilation_width(),
                              &ow),
               InvalidProgram,
               "padded input is smaller than the dilated kernel");
  } else {
    NODE_CHECK(p->adjustment_height() < p->stride_height() &&
                   p->adjustment_width() < p->stride_width(),
               InvalidProgram,
               "adjustment must be smaller than the stride");
    const uint64_t full_h =
        uint64_t(p->stride_height()) * (x[1] - 1) + p->adjustment_height() +
        uint64_t(p->kernel_height() - 1) * p->dilation_height() + 1;
    const uint64_t full_w =
        uint64_t(p->stride_width()) * (x[2] - 1) + p->adjustment_width() +
        uint64_t(p->kernel_width() - 1) * p->dilation_width() + 1;
    const uint64_t pad_h = uint64_t(p->padding_top()) + p->padding_bottom();
    const uint64_t pad_w = uint64_t(p->padding_left()) + p->padding_right();
    NODE_CHECK(x[1] >= 1 && x[2] >= 1 && full_h > pad_h && full_w > pad_w,
               InvalidProgram,
               "padding removes the whole output");
    oh = full_h - pad_h;
    ow = full_w - pad_w;
  }
  *out = {x[0], oh, ow, out_channels};
  return Error::Ok;
}

Error NodeChecker::pool(Dims* out) {
  const auto* p = node_->params_as_Pool2dParams();
  ET_CHECK_OK_OR_RETURN_ERROR(rank4("NHWC"));
  NODE_CHECK(p->pooling_height() >= 1 && p->pooling_width() >= 1 &&
                 p->stride_height() >= 1 && p->stride_width() >= 1 &&
                 p->dilation_height() >= 1 && p->dilation_width() >= 1,
             InvalidProgram,
             "pooling size, stride and dilation must be >= 1");
  NODE_CHECK(node_->kind() == NodeKind::max_pool2d ||
                 (p->dilation_height() == 1 && p->dilation_width() == 1),
             InvalidProgram,
             "avg_pool2d takes no dilation");
  const Dims& x = in(0);
  size_t oh = 0, ow = 0;
  NODE_CHECK(window_out(x[1],
                        p->padding_top(),
                        p->padding_bottom(),
                        p->pooling_height(),
                        p->stride_height(),
                        p->dilation_height(),
                        &oh) &&
                 window_out(x[2],
                            p->padding_left(),
                            p->padding_right(),
                            p->pooling_width(),
                            p->stride_width(),
                            p->dilation_width(),
                            &ow),
             InvalidProgram,
             "padded input is smaller than the pooling window");
  *out = {x[0], oh, ow, x[3]};
  return Error::Ok;
}

Error NodeChecker::fully_connected(Dims* out) {
  const bool transposed =
      node_->params_as_FullyConnectedParams()->transpose_weights();
  const Dims& x = in(0);
  const Dims& w = in(1);
  NODE_CHECK(!x.empty() && w.size() == 2,
             InvalidProgram,
             "input rank %zu and filter rank %zu, expected >= 1 and 2",
             x.size(),
             w.size());
  const size_t k = transposed ? w[0] : w[1];
  const size_t n = transposed ? w[1] : w[0];
  NODE_CHECK(x.back() == k,
             InvalidProgram,
             "input's last dim %zu does not match the filter's %zu inputs",
             x.back(),
             k);
  char got[96];
  NODE_CHECK(num_inputs() < 3 || in(2) == Dims{n},
             InvalidProgram,
             "bias dims %s, expected [%zu]",
             format_dims(in(2), got, sizeof(got)),
             n);
  *out = x;
  out->back() = n;
  return Error::Ok;
}

// Numpy broadcasting, aligned on the last dim.
Error NodeChecker::broadcast(Dims* out) {
  const Dims& a = in(0);
  const Dims& b = in(1);
  out->assign(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out->size(); ++i) {
    const size_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const size_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    NODE_CHECK(da == db || da == 1 || db == 1,
               InvalidProgram,
               "inputs do not broadcast: %zu vs %zu at dim -%zu",
               da,
               db,
               i + 1);
    (*out)[out->size() - 1 - i] = da == 1 ? db : da;
  }
  return Error::Ok;
}

Error NodeChecker::concatenate(Dims* out) {
  const uint32_t axis = node_->params_as_ConcatenateParams()->axis();
  *out = in(0);
  NODE_CHECK(axis < out->size(),
             InvalidProgram,
             "axis %u out of range for rank %zu",
             axis,
             out->size());
  for (size_t i = 1; i < num_inputs(); ++i) {
    const Dims& x = in(i);
    bool same = x.size() == out->size();
    for (size_t d = 0; same && d < x.size(); ++d) {
      same = d == axis || x[d] == (*out)[d];
    }
    NODE_CHECK(same,
               InvalidProgram,
               "input %zu differs from input 0 outside axis %u",
               i,
               axis);
    (*out)[axis] += x[axis];
  }
  return Error::Ok;
}

Error NodeChecker::transpose(Dims* out) {
  const auto* perm = node_->params_as_TransposeParams()->perm();
  const Dims& x = in(0);
  NODE_CHECK(perm != nullptr && perm->size() == x.size(),
             InvalidProgram,
             "perm has %u entries, expected %zu",
             perm == nullptr ? 0 : perm->size(),
             x.size());
  out->assign(x.size(), 0);
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < x.size(); ++i) {
    const uint32_t p = perm->Get(i);
    NODE_CHECK(p < x.size() && !seen[p],
               InvalidProgram,
               "perm[%zu] = %u: not a permutation of %zu dims",
               i,
               p,
               x.size());
    seen[p] = true;
    (*out)[i] = x[p];
  }
  return Error::Ok;
}

Error NodeChecker::reshape(Dims* out) {
  // dim_sources entries other than input dims.
  constexpr int32_t kKeep = -1;
  constexpr int32_t kInferred = -2;
  const auto* p = node_->params_as_ReshapeParams();
  const auto* sources = p->dim_sources();
  const size_t in_numel = graph_.values[node_->inputs()->Get(0)].numel;
  *out = to_dims(p->new_shape());
  NODE_CHECK(sources == nullptr || sources->size() == out->size(),
             InvalidProgram,
             "dim_sources has %u entries, new_shape %zu",
             sources == nullptr ? 0 : sources->size(),
             out->size());
  size_t inferred = out->size();
  for (size_t i = 0; sources != nullptr && i < sources->size(); ++i) {
    const int32_t source = sources->Get(i);
    if (source >= 0) {
      NODE_CHECK(static_cast<size_t>(source) < in(0).size(),
                 InvalidProgram,
                 "dim_sources[%zu] = %d: the input has rank %zu",
                 i,
                 source,
                 in(0).size());
      (*out)[i] = in(0)[source];
    } else if (source == kInferred) {
      NODE_CHECK(inferred == out->size(),
                 InvalidProgram,
                 "dim_sources: dims %zu and %zu are both inferred",
                 inferred,
                 i);
      inferred = i;
      (*out)[i] = 1;
    } else {
      NODE_CHECK(source == kKeep,
                 InvalidProgram,
                 "dim_sources[%zu] = %d is neither an input dim, -1 nor -2",
                 i,
                 source);
    }
  }
  size_t numel = 1;
  NODE_CHECK(count_elements(*out, &numel),
             InvalidProgram,
             "new_shape element count overflows");
  if (inferred < out->size()) {
    NODE_CHECK(numel > 0 && in_numel % numel == 0,
               InvalidProgram,
               "cannot infer dim %zu: the input's %zu elements are not a "
               "multiple of the other dims' %zu",
               inferred,
               in_numel,
               numel);
    (*out)[inferred] = in_numel / numel;
    numel = in_numel;
  }
  NODE_CHECK(numel == in_numel,
             InvalidProgram,
             "new_shape has %zu elements, the input %zu",
             numel,
             in_numel);
  return Error::Ok;
}

Error NodeChecker::slice(Dims* out) {
  const auto* p = node_->params_as_SliceParams();
  const Dims& x = in(0);
  NODE_CHECK(p->offsets() != nullptr && p->sizes() != nullptr &&
                 p->offsets()->size() == x.size() &&
                 p->sizes()->size() == x.size(),
             InvalidProgram,
             "offsets and sizes need %zu entries",
             x.size());
  const auto* modes = p->modes();
  NODE_CHECK(modes == nullptr || modes->size() == x.size(),
             InvalidProgram,
             "modes has %u entries, expected %zu",
             modes->size(),
             x.size());
  out->assign(x.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    const xnnpack_graph::SliceMode mode =
        modes == nullptr ? xnnpack_graph::SliceMode::fixed : modes->Get(i);
    NODE_CHECK(mode <= xnnpack_graph::SliceMode::MAX,
               InvalidProgram,
               "modes[%zu] = %d is not a slice mode",
               i,
               static_cast<int>(mode));
    uint64_t offset = 0, size = 0;
    NODE_CHECK(slice_window(p, i, x[i], &offset, &size),
               InvalidProgram,
               "dim %zu (%s): offset %llu and size %llu do not fit the "
               "input's %zu",
               i,
               xnnpack_graph::EnumNameSliceMode(mode),
               static_cast<unsigned long long>(p->offsets()->Get(i)),
               static_cast<unsigned long long>(p->sizes()->Get(i)),
               x[i]);
    (*out)[i] = static_cast<size_t>(size);
  }
  return Error::Ok;
}

Error NodeChecker::pad(Dims* out) {
  const auto* p = node_->params_as_ConstantPadParams();
  const Dims& x = in(0);
  NODE_CHECK(p->pre_paddings() != nullptr && p->post_paddings() != nullptr &&
                 p->pre_paddings()->size() == x.size() &&
                 p->post_paddings()->size() == x.size(),
             InvalidProgram,
             "pre_paddings and post_paddings need %zu entries",
             x.size());
  *out = x;
  for (size_t i = 0; i < x.size(); ++i) {
    const uint64_t pre = p->pre_paddings()->Get(i);
    const uint64_t post = p->post_paddings()->Get(i);
    NODE_CHECK(pre <= kUnset && post <= kUnset,
               InvalidProgram,
               "dim %zu: padding %llu + %llu is too large",
               i,
               static_cast<unsigned long long>(pre),
               static_cast<unsigned long long>(post));
    (*out)[i] += static_cast<size_t>(pre + post);
  }
  return Error::Ok;
}

Error NodeChecker::batch_matmul(Dims* out) {
  const Dims& a = in(0);
  const Dims& b = in(1);
  bool ok = a.size() >= 2 && a.size() == b.size() &&
            a[a.size() - 1] == b[b.size() - 2];
  for (size_t i = 0; ok && i + 2 < a.size(); ++i) {
    ok = a[i] == b[i];
  }
  char da[96], db[96];
  NODE_CHECK(ok,
             InvalidProgram,
             "cannot multiply %s by %s: expected [..., M, K] and [..., K, N]",
             format_dims(a, da, sizeof(da)),
             format_dims(b, db, sizeof(db)));
  *out = a;
  out->back() = b.back();
  return Error::Ok;
}

Error NodeChecker::infer(Dims* out) {
  switch (node_->kind()) {
    case NodeKind::conv2d:
    case NodeKind::deconv2d:
      NODE_CHECK(is_constant(1) && (num_inputs() < 3 || is_constant(2)),
                 InvalidProgram,
                 "filter and bias must be constants");
      return conv(out);
    case NodeKind::fully_connected:
      NODE_CHECK(is_constant(1) && (num_inputs() < 3 || is_constant(2)),
                 InvalidProgram,
                 "filter and bias must be constants");
      return fully_connected(out);
    case NodeKind::batch_matrix_multiply:
      return batch_matmul(out);
    case NodeKind::add:
    case NodeKind::subtract:
    case NodeKind::multiply:
    case NodeKind::divide:
    case NodeKind::maximum:
    case NodeKind::minimum:
      return broadcast(out);
    case NodeKind::prelu: {
      ET_CHECK_OK_OR_RETURN_ERROR(rank4("NHWC"));
      NODE_CHECK(is_constant(1) && in(1) == Dims{in(0)[3]},
                 InvalidProgram,
                 "slope must be a constant of [%zu] (the input's channels)",
                 in(0)[3]);
      *out = in(0);
      return Error::Ok;
    }
    case NodeKind::softmax:
    case NodeKind::safe_softmax:
      NODE_CHECK(!in(0).empty(), InvalidProgram, "input must be at least 1-D");
      *out = in(0);
      return Error::Ok;
    case NodeKind::max_pool2d:
    case NodeKind::avg_pool2d:
      return pool(out);
    case NodeKind::global_avg_pool2d:
      ET_CHECK_OK_OR_RETURN_ERROR(rank4("NHWC"));
      *out = {in(0)[0], 1, 1, in(0)[3]};
      return Error::Ok;
    case NodeKind::concatenate:
      return concatenate(out);
    case NodeKind::static_transpose:
      return transpose(out);
    case NodeKind::static_reshape:
      return reshape(out);
    case NodeKind::static_slice:
      return slice(out);
    case NodeKind::constant_pad:
      return pad(out);
    case NodeKind::resize_bilinear2d: {
      const auto* p = node_->params_as_ResizeBilinear2dParams();
      ET_CHECK_OK_OR_RETURN_ERROR(rank4("NHWC"));
      NODE_CHECK(p->new_height() >= 1 && p->new_width() >= 1,
                 InvalidProgram,
                 "new size must be at least 1x1");
      *out = {in(0)[0], p->new_height(), p->new_width(), in(0)[3]};
      return Error::Ok;
    }
    case NodeKind::layer_norm: {
      const uint32_t k = node_->params_as_LayerNormParams()->normalized_dims();
      const Dims& x = in(0);
      NODE_CHECK(k >= 1 && k <= x.size(),
                 InvalidProgram,
                 "normalized_dims %u outside [1, rank %zu]",
                 k,
                 x.size());
      const Dims normalized(x.end() - k, x.end());
      char want[96], got[96];
      for (size_t i = 1; i < num_inputs(); ++i) {
        NODE_CHECK(in(i) == normalized,
                   InvalidProgram,
                   "%s dims %s, expected %s",
                   i == 1 ? "weight" : "bias",
                   format_dims(in(i), got, sizeof(got)),
                   format_dims(normalized, want, sizeof(want)));
      }
      *out = x;
      return Error::Ok;
    }
    default:
      // Elementwise kinds with one input.
      *out = in(0);
      return Error::Ok;
  }
}

Error NodeChecker::check(std::vector<bool>* available) {
  const CheckedGraph& graph = graph_;
  const xnnpack_graph::Node* node = node_;
  const NodeTraits* traits = node_traits(node->kind());
  NODE_CHECK(traits != nullptr,
             InvalidProgram,
             "unknown node kind %d",
             static_cast<int>(node->kind()));
  const size_t n_in = node->inputs() == nullptr ? 0 : node->inputs()->size();
  const size_t n_out = node->outputs() == nullptr ? 0 : node->outputs()->size();
  NODE_CHECK(
      n_in >= traits->min_inputs && n_in <= traits->max_inputs && n_out == 1,
      InvalidProgram,
      "%zu inputs and %zu outputs, expected %zu to %zu inputs and 1 "
      "output",
      n_in,
      n_out,
      traits->min_inputs,
      traits->max_inputs);
  NODE_CHECK(node->params_type() == traits->params,
             InvalidProgram,
             "params %s (%d), expected %s",
             xnnpack_graph::EnumNameNodeParams(node->params_type()),
             static_cast<int>(node->params_type()),
             xnnpack_graph::EnumNameNodeParams(traits->params));
  // The flatbuffer verifier accepts a union whose type is set but whose
  // table is absent.
  NODE_CHECK(traits->params == xnnpack_graph::NodeParams::NONE ||
                 node->params() != nullptr,
             InvalidProgram,
             "params type %s is set but the params table is missing",
             xnnpack_graph::EnumNameNodeParams(traits->params));
  if (node->clamp() != nullptr) {
    const float lo = node->clamp()->min();
    const float hi = node->clamp()->max();
    NODE_CHECK(
        traits->fuses_clamp, InvalidProgram, "this kind takes no output clamp");
    NODE_CHECK(!std::isnan(lo) && !std::isnan(hi) && lo < hi,
               InvalidProgram,
               "clamp [%g, %g] is empty",
               static_cast<double>(lo),
               static_cast<double>(hi));
  }
  for (size_t i = 0; i < n_in; ++i) {
    const uint32_t v = node->inputs()->Get(i);
    NODE_CHECK(v < graph.values.size(),
               InvalidProgram,
               "input %zu: value index %u out of range (%zu values)",
               i,
               v,
               graph.values.size());
    NODE_CHECK((*available)[v],
               InvalidProgram,
               "input %zu: value %u is not a constant, an external input or "
               "an earlier node's output",
               i,
               v);
  }
  const uint32_t output = node->outputs()->Get(0);
  NODE_CHECK(output < graph.values.size(),
             InvalidProgram,
             "output: value index %u out of range (%zu values)",
             output,
             graph.values.size());
  const ValueInfo& out_info = graph.values[output];
  NODE_CHECK((out_info.role == ValueInfo::Role::Intermediate ||
              out_info.role == ValueInfo::Role::Output) &&
                 !(*available)[output],
             InvalidProgram,
             "output: value %u is a constant, an input or already produced",
             output);
  Dims expected;
  ET_CHECK_OK_OR_RETURN_ERROR(infer(&expected));
  char want[96], got[96];
  NODE_CHECK(out_info.dims == expected,
             InvalidProgram,
             "output value %u has dims %s, expected %s",
             output,
             format_dims(out_info.dims, got, sizeof(got)),
             format_dims(expected, want, sizeof(want)));
  (*available)[output] = true;
  return Error::Ok;
}

#undef NODE_CHECK

} // namespace

bool slice_window(const xnnpack_graph::SliceParams* params,
                  size_t d,
                  size_t n,
                  uint64_t* offset,
                  uint64_t* size) {
  using xnnpack_graph::SliceMode;
  const SliceMode mode =
      params->modes() == nullptr ? SliceMode::fixed : params->modes()->Get(d);
  const uint64_t given_offset = params->offsets()->Get(d);
  const uint64_t given_size = params->sizes()->Get(d);
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

Error infer_dims(const xnnpack_graph::Graph* graph, CheckedGraph* checked) {
  for (uint32_t v : checked->inputs) {
    ValueInfo& info = checked->values[v];
    // The caller checked the dims against max_dims.
    (void)count_elements(info.dims, &info.numel);
  }
  const auto* nodes = graph->nodes();
  const size_t count = nodes == nullptr ? 0 : nodes->size();
  for (size_t i = 0; i < count; ++i) {
    const auto* node = nodes->Get(i);
    Dims dims;
    // The node's log line says which sizes do not fit; at run time that
    // is the caller's inputs, not the blob.
    ET_CHECK_OR_RETURN_ERROR(
        NodeChecker(*checked, node, i).infer(&dims) == Error::Ok,
        InvalidArgument,
        "XNNPACK graph node %zu (%s): the inputs' sizes do not fit it",
        i,
        xnnpack_graph::EnumNameNodeKind(node->kind()));
    const uint32_t output = node->outputs()->Get(0);
    ValueInfo& info = checked->values[output];
    size_t numel = 0;
    char got[96], bound[96];
    ET_CHECK_OR_RETURN_ERROR(
        count_elements(dims, &numel) && numel >= 1 && numel <= info.max_numel,
        InvalidArgument,
        "XNNPACK graph node %zu (%s): output value %u would have dims %s, "
        "outside 1 to the %zu elements of its declared dims %s",
        i,
        xnnpack_graph::EnumNameNodeKind(node->kind()),
        output,
        format_dims(dims, got, sizeof(got)),
        info.max_numel,
        format_dims(info.max_dims, bound, sizeof(bound)));
    info.dims = std::move(dims);
    info.numel = numel;
  }
  return Error::Ok;
}

Error check_graph(const BlobView& blob, CheckedGraph* out) {
  ET_CHECK_OK_OR_RETURN_ERROR(check_values(blob, out));
  std::vector<bool> available(out->values.size());
  for (size_t i = 0; i < out->values.size(); ++i) {
    available[i] = out->values[i].role == ValueInfo::Role::Constant ||
                   out->values[i].role == ValueInfo::Role::Input;
  }
  const auto* nodes = blob.graph->nodes();
  const size_t count = nodes == nullptr ? 0 : nodes->size();
  for (size_t i = 0; i < count; ++i) {
    ET_CHECK_OK_OR_RETURN_ERROR(
        NodeChecker(*out, nodes->Get(i), i).check(&available));
  }
  for (size_t j = 0; j < out->outputs.size(); ++j) {
    ET_CHECK_OR_RETURN_ERROR(available[out->outputs[j]],
                             InvalidProgram,
                             "XNNPACK graph: output %zu (value %u) is not "
                             "produced by any node",
                             j,
                             out->outputs[j]);
  }
  return Error::Ok;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
