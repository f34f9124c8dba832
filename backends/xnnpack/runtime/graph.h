#pragma once

// The delegate's graph as the backend works with it: values and nodes read
// from the blob's flatbuffer, with every id, index, size and count checked,
// and each value's current dims.
//
// load_graph() reads and checks a parsed blob: each value's datatype, dims,
// role (constant, external input or output, intermediate) and constant bytes
// (from the blob's constant data or, by key, from the program's named data);
// each node's wiring (its inputs exist when it runs) and params; and that
// every node's declared output dims are the ones its inputs and params
// produce. XNNPACK sizes its buffers from declared dims and does not
// recompute them, so that check is what keeps a malformed blob from writing
// out of bounds.
//
// Dynamic shapes: values are declared at their upper bounds, and an input
// may be smaller in any dim at run time; infer_dims() recomputes every
// node's output dims from the inputs' with the same per-node rules.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include <executorch/backends/xnnpack/runtime/blob.h>
#include <executorch/backends/xnnpack/schema_generated.h>
#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/named_data_map.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using Dims = std::vector<size_t>;

// The largest rank the backend accepts (XNNPACK's XNN_MAX_TENSOR_DIMS).
inline constexpr size_t kMaxDims = 6;
// An absent optional input (a bias), as in XNNPACK (XNN_INVALID_VALUE_ID).
inline constexpr uint32_t kNoValue = std::numeric_limits<uint32_t>::max();

struct Quantization {
  enum class Scheme {
    None,
    // One scale and zero point (qint8, quint8, qint32).
    PerTensor,
    // One scale per index of channel_dim, zero point 0 (qcint8, qcint32,
    // qcint4).
    PerChannel,
    // One scale per group of group_size elements of each channel (qbint4).
    PerChannelGroup,
    // Scales computed at run time per leading index (qdint8).
    PerTokenDynamic,
  };
  Scheme scheme = Scheme::None;
  float scale = 0.0f;
  int32_t zero_point = 0;
  // PerChannel / PerChannelGroup: num_scales scales (from the flatbuffer or
  // the constant data; bf16 scales are widened into scale_storage).
  const float* scales = nullptr;
  size_t num_scales = 0;
  std::vector<float> scale_storage;
  uint32_t channel_dim = 0;
  uint32_t group_size = 0;
  int32_t num_nonbatch_dims = 0;
};

struct ValueInfo {
  enum class Role { Intermediate, Constant, Input, Output };
  Role role = Role::Intermediate;
  fb_xnnpack::XNNDatatype datatype = fb_xnnpack::XNNDatatype::xnn_datatype_fp32;
  // Bytes per element; 0 for packed sub-byte types.
  size_t element_size = 4;
  // The current dims: as declared, or as infer_dims() last computed them.
  Dims dims;
  size_t numel = 1;
  // As declared: the upper bounds of a value of dynamic size. Buffers hold
  // max_numel elements.
  Dims max_dims;
  size_t max_numel = 1;
  // Role::Constant: the value's bytes (null once released, see
  // CompiledGraph::release_packed_constants).
  const void* constant = nullptr;
  // Role::Constant from named data: its index in Graph::named_buffers.
  size_t named_buffer = std::numeric_limits<size_t>::max();
  // Role::Input / Role::Output: position in the delegate call's args.
  uint32_t arg_index = 0;
  // The blob's id for the value (id_out), for log lines.
  uint32_t id = 0;
  Quantization quant;
};

struct NodeOps;
struct HostContext;

struct Node {
  fb_xnnpack::XNodeUnion kind = fb_xnnpack::XNodeUnion::NONE;
  const NodeOps* ops = nullptr;
  // The kind's params table in the flatbuffer (e.g. _XNNNodeConv).
  const void* params = nullptr;
  // Value indices (not blob ids); kNoValue for an absent optional input.
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  uint32_t flags = 0;
  // The fused output clamp (XNode.output_min_max), or [-inf, inf].
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
  bool has_output_clamp = false;
  uint32_t debug_handle = 0;
  // Set for a node of an XNNPACK kind the backend runs on the host instead,
  // with a faster kernel of its own (host_kernels.h); host_state holds what
  // that kernel prepared (packed weights).
  runtime::Error (*host_run)(const HostContext& context,
                             const Node& node) = nullptr;
  std::shared_ptr<const void> host_state;
};

struct Graph {
  std::vector<ValueInfo> values;
  std::vector<Node> nodes;
  // Value index of each input arg, then of each output arg (arg
  // inputs.size() + j is output j).
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  // Constant bytes the graph holds (named data, copies of constants XNNPACK
  // may read past the end of).
  std::vector<runtime::FreeableBuffer> named_buffers;
  std::vector<std::vector<uint8_t>> owned_constants;
};

// Reads and checks `blob`'s graph; named constants come from
// `named_data_map` (may be null when the blob has none). Errors:
// InvalidProgram for malformed graphs, NotFound for a named constant the map
// lacks, NotSupported for valid graphs using what this backend cannot run
// (e.g. a datatype Debian's XNNPACK lacks); each with a log line naming the
// value or node and the field.
runtime::Error load_graph(const BlobView& blob,
                          const runtime::NamedDataMap* named_data_map,
                          Graph* out);

// Recomputes the dims of every node's outputs from the current dims of the
// graph's inputs. Errors: InvalidArgument when the inputs' sizes do not fit
// a node, or a value would outgrow the buffer of its declared dims; the log
// names the node.
runtime::Error infer_dims(Graph* graph);

// "[a, b, c]" into `buffer`, for log lines.
const char* format_dims(const Dims& dims, char* buffer, size_t size);

// The element count of `dims`; false when its bytes (at `element_size`,
// at least 1) overflow a size_t.
bool count_elements(const Dims& dims, size_t element_size, size_t* numel);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
