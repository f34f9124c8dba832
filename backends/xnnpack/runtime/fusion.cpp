#include <executorch/backends/xnnpack/runtime/fusion.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include <executorch/backends/xnnpack/runtime/host_kernels.h>
#include <executorch/backends/xnnpack/runtime/host_util.h>
#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST
#include <executorch/kernels/optimized/simd/isa.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

using fb_xnnpack::XNodeUnion;
using runtime::Error;

const char* Fusion::name() const {
  switch (kind) {
    case Kind::kLayerNorm:
      return "layer_norm";
    case Kind::kSafeSoftmax:
      return "safe_softmax";
    case Kind::kSoftmax:
      return "softmax";
    case Kind::kInvertedResidual:
      return "inverted_residual";
  }
  return "";
}

#ifdef EXECUTORCH_XNNPACK_OPTIMIZED_HOST

namespace {

// reduction()'s weight for a mean: 1/C.
constexpr float kMeanWeight = 0.0f;

// Where each row of a tensor of `dims` finds its row of a mask broadcast to
// it: the mask has at most as many dims, the same last one, and each of its
// other dims (aligned from the right) is 1 or the tensor's.
class MaskRows {
 public:
  bool init(const Dims& dims, const Dims& mask) {
    if (dims.empty() || mask.empty() || mask.size() > dims.size() ||
        mask.back() != dims.back()) {
      return false;
    }
    count_ = dims.size() - 1;
    size_t stride = mask.back();
    for (size_t i = 0; i < count_; ++i) {
      // Leading dims from the innermost out.
      const size_t d = dims.size() - 2 - i;
      const size_t from_right = dims.size() - 1 - d;
      const size_t m =
          from_right < mask.size() ? mask[mask.size() - 1 - from_right] : 1;
      if (m != 1 && m != dims[d]) {
        return false;
      }
      sizes_[i] = dims[d];
      strides_[i] = m == 1 ? 0 : stride;
      stride *= m;
    }
    return true;
  }
  // The offset of row `row`'s mask row.
  size_t offset(size_t row) const {
    size_t result = 0;
    for (size_t i = 0; i < count_ && row != 0; ++i) {
      result += (row % sizes_[i]) * strides_[i];
      row /= sizes_[i];
    }
    return result;
  }

 private:
  size_t count_ = 0;
  size_t sizes_[kMaxDims] = {};
  size_t strides_[kMaxDims] = {};
};

bool broadcasts_over_rows(const Dims& mask, const Dims& dims) {
  MaskRows rows;
  return rows.init(dims, mask);
}

// Matches the lowering's node sequences (backends/xnnpack/lowering/norm.py)
// starting at one node; each match() returns the fusion or false.
class Matcher {
 public:
  explicit Matcher(const Graph& graph) : graph_(graph) {
    uses_.assign(graph.values.size(), 0);
    for (const Node& node : graph.nodes) {
      for (uint32_t v : node.inputs) {
        if (v != kNoValue) {
          ++uses_[v];
        }
      }
    }
  }

  bool match_layer_norm(size_t first, Fusion* out) {
    begin(first);
    uint32_t x = kNoValue, mean, centered, squares, variance, std_dev, cur;
    if (!reduction(&x, &mean, kMeanWeight, false)) {
      return false;
    }
    float eps = 0.0f;
    if (!next(XNodeUnion::XNNSubtract, {x, mean}, &centered) ||
        !next(XNodeUnion::XNNSquare, {centered}, &squares) ||
        !reduction(&squares, &variance, kMeanWeight, false, &eps) ||
        !next(XNodeUnion::XNNSquareRoot, {variance}, &std_dev) ||
        !next(XNodeUnion::XNNDiv, {centered, std_dev}, &cur)) {
      return false;
    }
    const size_t channels = graph_.values[x].dims.back();
    uint32_t weight = kNoValue, bias = kNoValue;
    if (peek(XNodeUnion::XNNMultiply) &&
        channel_constant(node().inputs[1], channels)) {
      weight = node().inputs[1];
      next(XNodeUnion::XNNMultiply, {cur, weight}, &cur);
    }
    if (peek(XNodeUnion::XNNAdd) &&
        channel_constant(node().inputs[1], channels)) {
      bias = node().inputs[1];
      next(XNodeUnion::XNNAdd, {cur, bias}, &cur);
    }
    if (!closed(x, cur) || !same_dims(x, cur)) {
      return false;
    }
    *out =
        Fusion{Fusion::Kind::kLayerNorm, first, at_, x, cur, weight, bias, eps};
    return true;
  }

  // softmax(x [* or / scalar] [+ mask]) over the last dim: PyTorch's
  // _safe_softmax pattern (below), or an XNNPACK softmax node after a scale
  // or a mask.
  bool match_softmax(size_t first, Fusion* out) {
    begin(first);
    uint32_t x = kNoValue, cur = kNoValue, mask = kNoValue;
    float scale = 1.0f;
    scaling(&x, &cur, &scale);
    masking(&x, &cur, &mask);
    if (x == kNoValue) {
      // No prefix: the run starts at the softmax itself.
      x = at_ < graph_.nodes.size() && !node().inputs.empty() ? node().inputs[0]
                                                              : kNoValue;
      cur = x;
    }
    Fusion::Kind kind = Fusion::Kind::kSafeSoftmax;
    uint32_t result = kNoValue;
    if (!safe_softmax(cur, &result)) {
      kind = Fusion::Kind::kSoftmax;
      if ((scale == 1.0f && mask == kNoValue) ||
          !next(XNodeUnion::XNNSoftmax, {cur}, &result)) {
        return false;
      }
    }
    if (x == kNoValue || !closed(x, result) || !same_dims(x, result)) {
      return false;
    }
    *out = Fusion{kind, first, at_, x, result};
    out->scale = scale;
    out->mask = mask;
    return true;
  }

  bool match_inverted_residual(size_t first, Fusion* out) {
    begin(first);
    if (at_ + 3 > graph_.nodes.size()) {
      return false;
    }
    // The wiring first; the kernels (which pack the filters) last.
    const Node& expand = node();
    if (expand.kind != XNodeUnion::XNNConv2d || expand.outputs.size() != 1) {
      return false;
    }
    const uint32_t x = expand.inputs[0];
    uint32_t expanded, filtered, result;
    take(&expanded);
    const Node& depthwise = node();
    if (depthwise.kind != XNodeUnion::XNNDepthwiseConv2d ||
        depthwise.outputs.size() != 1 || depthwise.inputs[0] != expanded ||
        !take(&filtered)) {
      return false;
    }
    const Node& project = node();
    if (project.kind != XNodeUnion::XNNConv2d || project.outputs.size() != 1 ||
        project.inputs[0] != filtered || !take(&result)) {
      return false;
    }
    // The residual: the block's input added, unclamped, to the projection.
    bool residual = false;
    if (peek(XNodeUnion::XNNAdd) && node().inputs.size() == 2 &&
        same_dims(x, result) &&
        ((node().inputs[0] == result && node().inputs[1] == x) ||
         (node().inputs[0] == x && node().inputs[1] == result))) {
      take(&result);
      residual = true;
    }
    const Dims& in = graph_.values[x].dims;
    const Dims& mid = graph_.values[expanded].dims;
    if (!closed(x, result) || in.size() != 4 ||
        !F32InvertedResidual::pays(in[1], in[2], mid.back())) {
      return false;
    }
    F32PointwiseConv expand_conv, project_conv;
    auto block = std::make_shared<F32InvertedResidual>();
    if (!pointwise_conv(graph_, expand, &expand_conv) ||
        !pointwise_conv(graph_, project, &project_conv) ||
        !block->init(expand_conv,
                     host_f32_dwconv(depthwise),
                     project_conv,
                     residual,
                     F32DwConv::selected_isa())) {
      return false;
    }
    *out = Fusion{Fusion::Kind::kInvertedResidual, first, at_, x, result};
    out->block = std::move(block);
    return true;
  }

 private:
  // Takes a multiplication or division of the input by a scalar constant.
  void scaling(uint32_t* x, uint32_t* cur, float* scale) {
    if (node_inputs(2) && peek(XNodeUnion::XNNMultiply)) {
      for (int k = 0; k < 2; ++k) {
        const float* c = scalar_constant(node().inputs[k]);
        if (c != nullptr && std::isfinite(*c)) {
          *x = node().inputs[1 - k];
          *scale = *c;
          take(cur);
          return;
        }
      }
    } else if (node_inputs(2) && peek(XNodeUnion::XNNDiv)) {
      const float* c = scalar_constant(node().inputs[1]);
      if (c != nullptr && std::isfinite(*c) && *c != 0.0f) {
        *x = node().inputs[0];
        *scale = 1.0f / *c;
        take(cur);
      }
    }
  }
  // Takes an addition of a mask to the input (to the scaled input when
  // there was a scale): a value of at most the input's rank whose rows
  // are the input's (same last dim), broadcast over its leading dims.
  void masking(uint32_t* x, uint32_t* cur, uint32_t* mask) {
    if (!node_inputs(2) || !peek(XNodeUnion::XNNAdd)) {
      return;
    }
    const uint32_t a = node().inputs[0], b = node().inputs[1];
    const Dims& dims = graph_.values[node().outputs[0]].dims;
    uint32_t input = kNoValue, other = kNoValue;
    if (*cur != kNoValue) {
      input = *cur;
      other = a == *cur ? b : (b == *cur ? a : kNoValue);
    } else {
      // The full-size operand is the input; the other one the mask.
      const bool a_full = graph_.values[a].dims == dims;
      input = a_full ? a : b;
      other = a_full ? b : a;
    }
    if (other == kNoValue || other == input || !fp32(other) ||
        graph_.values[input].dims != dims ||
        !broadcasts_over_rows(graph_.values[other].dims, dims)) {
      return;
    }
    if (*x == kNoValue) {
      *x = input;
    }
    *mask = other;
    take(cur);
  }
  // PyTorch's _safe_softmax of `x` as the lowering writes it.
  bool safe_softmax(uint32_t x, uint32_t* result) {
    if (!node_inputs(2) || !peek(XNodeUnion::XNNMaximum) ||
        node().inputs[0] != x) {
      return false;
    }
    const float* floor = scalar_constant(node().inputs[1]);
    if (floor == nullptr || *floor != -FLT_MAX) {
      return false;
    }
    uint32_t finite, gap, present, row_mask, probabilities;
    return next(XNodeUnion::XNNMaximum, {x, node().inputs[1]}, &finite) &&
           next(XNodeUnion::XNNSubtract, {x, finite}, &gap) &&
           next(XNodeUnion::XNNExp, {gap}, &present) &&
           reduction(&present, &row_mask, 1.0f, true) &&
           next(XNodeUnion::XNNSoftmax, {finite}, &probabilities) &&
           next(XNodeUnion::XNNMultiply, {probabilities, row_mask}, result);
  }
  bool node_inputs(size_t count) const {
    return at_ < graph_.nodes.size() && node().inputs.size() == count;
  }
  void begin(size_t first) {
    at_ = first;
    inside_.clear();
  }
  const Node& node() const {
    return graph_.nodes[at_];
  }
  bool fp32(uint32_t v) const {
    const ValueInfo& info = graph_.values[v];
    return info.datatype == fb_xnnpack::XNNDatatype::xnn_datatype_fp32 &&
           info.quant.scheme == Quantization::Scheme::None;
  }
  // The current node is of `kind`, with one fp32 output and no clamp.
  bool peek(XNodeUnion kind) const {
    return at_ < graph_.nodes.size() && node().kind == kind &&
           node().outputs.size() == 1 && fp32(node().outputs[0]) &&
           !node().has_output_clamp;
  }
  // Takes the current node if it is `kind` reading exactly `inputs`.
  bool next(XNodeUnion kind,
            std::initializer_list<uint32_t> inputs,
            uint32_t* output) {
    if (!peek(kind) || node().inputs.size() != inputs.size() ||
        !std::equal(inputs.begin(), inputs.end(), node().inputs.begin())) {
      return false;
    }
    return take(output);
  }
  bool take(uint32_t* output) {
    *output = node().outputs[0];
    inside_.push_back(*output);
    ++at_;
    return true;
  }
  // A row reduction: a fully connected node over `*input` (taken from the
  // node when kNoValue) with a constant [1, C] filter of `weight` in every
  // entry (kMeanWeight: 1/C), a constant [1] bias exactly when `bias` is
  // asked for, and a [0, 1] clamp exactly when `clamped`.
  bool reduction(uint32_t* input,
                 uint32_t* output,
                 float weight,
                 bool clamped,
                 float* bias = nullptr) {
    if (at_ >= graph_.nodes.size()) {
      return false;
    }
    const Node& n = node();
    if (n.kind != XNodeUnion::XNNFullyConnected || n.inputs.size() != 3 ||
        n.flags != 0 || n.outputs.size() != 1 || !fp32(n.outputs[0]) ||
        n.has_output_clamp != clamped ||
        (clamped && (n.output_min != 0.0f || n.output_max != 1.0f)) ||
        (*input != kNoValue && n.inputs[0] != *input) || !fp32(n.inputs[0])) {
      return false;
    }
    const Dims& x = graph_.values[n.inputs[0]].dims;
    if (x.empty() || x.back() == 0) {
      return false;
    }
    const size_t channels = x.back();
    const float expected =
        weight == kMeanWeight
            ? static_cast<float>(1.0 / static_cast<double>(channels))
            : weight;
    const float* filter = constant(n.inputs[1], Dims{1, channels});
    if (filter == nullptr) {
      return false;
    }
    for (size_t c = 0; c < channels; ++c) {
      if (filter[c] != expected) {
        return false;
      }
    }
    if (bias == nullptr) {
      if (n.inputs[2] != kNoValue) {
        return false;
      }
    } else {
      const float* b = constant(n.inputs[2], Dims{1});
      if (b == nullptr) {
        return false;
      }
      *bias = *b;
    }
    *input = n.inputs[0];
    return take(output);
  }
  const float* constant(uint32_t v, const Dims& dims) const {
    if (v == kNoValue || v >= graph_.values.size()) {
      return nullptr;
    }
    const ValueInfo& info = graph_.values[v];
    return info.role == ValueInfo::Role::Constant && fp32(v) &&
                   info.dims == dims
               ? static_cast<const float*>(info.constant)
               : nullptr;
  }
  const float* scalar_constant(uint32_t v) const {
    if (v == kNoValue || v >= graph_.values.size() ||
        graph_.values[v].numel != 1) {
      return nullptr;
    }
    return constant(v, graph_.values[v].dims);
  }
  bool channel_constant(uint32_t v, size_t channels) const {
    return constant(v, Dims{channels}) != nullptr;
  }
  // The run is self-contained: fp32 input, every value it made but the
  // last is an intermediate read only inside it.
  bool closed(uint32_t input, uint32_t result) const {
    if (!fp32(input) || inside_.empty() || inside_.back() != result) {
      return false;
    }
    for (size_t k = 0; k + 1 < inside_.size(); ++k) {
      const uint32_t v = inside_[k];
      if (graph_.values[v].role != ValueInfo::Role::Intermediate) {
        return false;
      }
      size_t inner_uses = 0;
      for (size_t i = first_node(); i < at_; ++i) {
        for (uint32_t in : graph_.nodes[i].inputs) {
          inner_uses += in == v;
        }
      }
      if (inner_uses != uses_[v]) {
        return false;
      }
    }
    return true;
  }
  bool same_dims(uint32_t a, uint32_t b) const {
    return graph_.values[a].dims == graph_.values[b].dims;
  }
  size_t first_node() const {
    return at_ - inside_.size();
  }

  const Graph& graph_;
  std::vector<size_t> uses_;
  size_t at_ = 0;
  std::vector<uint32_t> inside_;
};

// Calls f(row) for `rows` rows of `cols` elements, split across the pool
// when there are at least `min_parallel` elements.
template <typename F>
void for_rows(
    pthreadpool_t pool, size_t rows, size_t cols, size_t min_parallel, F f) {
  auto tile = [&](size_t start, size_t count) {
    for (size_t r = start; r < start + count; ++r) {
      f(r);
    }
  };
  parallelize_tiles(
      pool_for(rows * cols, min_parallel, pool),
      rows,
      std::max<size_t>(1, kElementTile / std::max<size_t>(cols, 1)),
      tile);
}

} // namespace

std::vector<Fusion> find_fusions(const Graph& graph) {
  std::vector<Fusion> fusions;
  Matcher matcher(graph);
  for (size_t i = 0; i < graph.nodes.size();) {
    Fusion fusion;
    if (matcher.match_layer_norm(i, &fusion) ||
        matcher.match_softmax(i, &fusion) ||
        matcher.match_inverted_residual(i, &fusion)) {
      fusions.push_back(fusion);
      i = fusion.end_node;
    } else {
      ++i;
    }
  }
  return fusions;
}

Error run_fusion(const Fusion& fusion, const HostContext& context) {
  const ValueInfo& x = context.graph.values[fusion.input];
  if (fusion.kind == Fusion::Kind::kInvertedResidual) {
    const Dims& y = context.graph.values[fusion.output].dims;
    ET_CHECK_OR_RETURN_ERROR(
        fusion.block->run(static_cast<const float*>(context.data[fusion.input]),
                          x.dims[0],
                          x.dims[1],
                          x.dims[2],
                          static_cast<float*>(context.data[fusion.output]),
                          y[1],
                          y[2],
                          context.pool),
        MemoryAllocationFailed,
        "inverted residual block to value %u: no memory for its row buffers",
        context.graph.values[fusion.output].id);
    return Error::Ok;
  }
  const kernels::optimized::SimdKernels& simd = kernels::optimized::simd();
  const size_t cols = x.dims.back();
  if (x.numel == 0) {
    return Error::Ok;
  }
  const size_t rows = x.numel / cols;
  const auto* in = static_cast<const float*>(context.data[fusion.input]);
  auto* out = static_cast<float*>(context.data[fusion.output]);
  const auto n = static_cast<int64_t>(cols);
  if (fusion.kind == Fusion::Kind::kLayerNorm) {
    auto param = [&](uint32_t v) {
      return v == kNoValue ? nullptr
                           : static_cast<const float*>(context.data[v]);
    };
    const float* weight = param(fusion.weight);
    const float* bias = param(fusion.bias);
    for_rows(context.pool, rows, cols, kMinParallelNormElements, [&](size_t r) {
      float mean, rstd;
      simd.layer_norm_row(in + r * cols,
                          out + r * cols,
                          n,
                          weight,
                          bias,
                          fusion.eps,
                          &mean,
                          &rstd);
    });
    return Error::Ok;
  }
  MaskRows mask_rows;
  const float* mask = nullptr;
  if (fusion.mask != kNoValue) {
    const Dims& mask_dims = context.graph.values[fusion.mask].dims;
    char mask_text[64], x_text[64];
    ET_CHECK_OR_RETURN_ERROR(
        mask_rows.init(x.dims, mask_dims),
        InvalidArgument,
        "softmax of value %u: its mask (value %u, %s) does not broadcast "
        "over the rows of %s",
        x.id,
        context.graph.values[fusion.mask].id,
        format_dims(mask_dims, mask_text, sizeof(mask_text)),
        format_dims(x.dims, x_text, sizeof(x_text)));
    mask = static_cast<const float*>(context.data[fusion.mask]);
  }
  using kernels::optimized::BinaryOp;
  using kernels::optimized::UnaryOp;
  for_rows(context.pool, rows, cols, kMinParallelElements, [&](size_t r) {
    const float* row = in + r * cols;
    float* result = out + r * cols;
    // The logits first, in the output row: one pass for scale and mask.
    if (mask != nullptr) {
      simd.binary(BinaryOp::kAdd,
                  mask + mask_rows.offset(r),
                  1,
                  row,
                  1,
                  result,
                  n,
                  fusion.scale);
      row = result;
    } else if (fusion.scale != 1.0f) {
      simd.unary(UnaryOp::kAffine, row, result, n, fusion.scale, 0.0f);
      row = result;
    }
    if (fusion.kind == Fusion::Kind::kSafeSoftmax &&
        std::all_of(row, row + cols, [](float v) { return v == -INFINITY; })) {
      std::memset(result, 0, cols * sizeof(float));
    } else {
      simd.softmax_row(row, result, n, /*log=*/false);
    }
  });
  return Error::Ok;
}

#else // EXECUTORCH_XNNPACK_OPTIMIZED_HOST

std::vector<Fusion> find_fusions(const Graph& /*graph*/) {
  return {};
}

Error run_fusion(const Fusion& /*fusion*/, const HostContext& /*context*/) {
  return Error::NotSupported;
}

#endif // EXECUTORCH_XNNPACK_OPTIMIZED_HOST

} // namespace xnnpack
} // namespace backends
} // namespace executorch
