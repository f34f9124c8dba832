// Malformed blobs and bad args: each gets a specific error and a log line
// naming what was wrong and where, never a crash.

#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <executorch/backends/xnnpack/runtime/threadpool.h>
#include <executorch/backends/xnnpack/test/test_util.h>
#include <executorch/runtime/testing/log_capture.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace testing {
namespace {

using runtime::Error;
using runtime::testing::LogCapture;

// x [2, 3] -> fully_connected (constant [4, 3] weights) -> y [2, 4].
BlobBuilder linear_graph() {
  BlobBuilder b;
  const uint32_t x = b.input({2, 3}, 0);
  const uint32_t w = b.constant({4, 3}, random_values(12));
  const uint32_t y = b.output({2, 4}, 1);
  b.node(NodeKind::XNNFullyConnected, {x, w}, y, fully_connected_params(false));
  return b;
}

Error init_error(const std::vector<uint8_t>& blob) {
  DelegateRunner runner;
  return runner.init(blob);
}

void put_u32(std::vector<uint8_t>& blob, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) {
    blob[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
}

TEST(XnnpackMalformed, ValidGraphRuns) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(linear_graph().build()), Error::Ok);
  std::vector<TensorPtr> out{output_tensor({2, 4})};
  EXPECT_EQ(runner.run({input_tensor({2, 3}, random_values(6))}, out),
            Error::Ok);
}

// Without its header magic, a blob is read as a bare flatbuffer, whose
// identifier is then wrong.
TEST(XnnpackMalformed, BadMagic) {
  std::vector<uint8_t> blob = linear_graph().build();
  blob[4] = 'Y';
  LogCapture log;
  EXPECT_EQ(init_error(blob), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"identifier"}));
}

TEST(XnnpackMalformed, TruncatedHeader) {
  std::vector<uint8_t> blob = linear_graph().build();
  blob.resize(20);
  LogCapture log;
  EXPECT_EQ(init_error(blob), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"shorter than the"}));
}

// A delegate whose data is empty, at an address not 8-byte aligned (inline
// data of size 0 in a .pte). fuzz_program found it under UBSan: the aligned
// copy of the blob handed memcpy the null data() of an empty vector.
TEST(XnnpackMalformed, EmptyBlobAtMisalignedAddress) {
  const std::vector<uint64_t> storage(2);
  const auto* misaligned = reinterpret_cast<const uint8_t*>(storage.data()) + 4;
  DelegateRunner runner;
  LogCapture log;
  EXPECT_EQ(runner.init_at(misaligned, 0), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"XNNPACK blob: 0 bytes is too short"}));
}

TEST(XnnpackMalformed, FlatbufferOffsetPastEnd) {
  std::vector<uint8_t> blob = linear_graph().build();
  put_u32(blob, kFlatbufferOffsetField, blob.size() + 8);
  LogCapture log;
  EXPECT_EQ(init_error(blob), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"flatbuffer", "outside"}));
}

TEST(XnnpackMalformed, ConstantAreaPastEnd) {
  std::vector<uint8_t> blob = linear_graph().build();
  put_u32(blob, kConstantSizeField, blob.size());
  LogCapture log;
  EXPECT_EQ(init_error(blob), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"constant data", "is not between"}));
}

TEST(XnnpackMalformed, WrongIdentifier) {
  std::vector<uint8_t> blob = linear_graph().build();
  // The identifier follows the flatbuffer's 4-byte root offset.
  blob[blob[kFlatbufferOffsetField] + 4] = 'Z';
  LogCapture log;
  EXPECT_EQ(init_error(blob), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"identifier"}));
}

TEST(XnnpackMalformed, NodeInputIndexOutOfRange) {
  BlobBuilder b = linear_graph();
  b.nodes()[0].inputs[1] = 17;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (fully_connected)", "input 1", "id 17, which no value has"}));
}

TEST(XnnpackMalformed, NodeOutputIndexOutOfRange) {
  BlobBuilder b = linear_graph();
  b.nodes()[0].output = 3;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0", "output 0", "id 3, which no value has"}));
}

TEST(XnnpackMalformed, ConstantOffsetPastEnd) {
  BlobBuilder b = linear_graph();
  b.values()[1].constant_ref = std::make_pair(uint64_t{1} << 40, 48);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 1", "past the end"}));
}

TEST(XnnpackMalformed, ConstantSizeMismatch) {
  BlobBuilder b = linear_graph();
  b.values()[1].constant_ref = std::make_pair(0, 44);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 1", "has 44 bytes, the value needs 48"}));
}

TEST(XnnpackMalformed, WrongOutputDims) {
  BlobBuilder b = linear_graph();
  b.values()[2].dims = {2, 5};
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (fully_connected)", "[2, 5]", "[2, 4]"}));
}

TEST(XnnpackMalformed, UnknownNodeKind) {
  BlobBuilder b = linear_graph();
  b.nodes()[0].kind = static_cast<NodeKind>(200);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0", "unknown node kind 200"}));
}

TEST(XnnpackMalformed, ParamsTypeWithoutTable) {
  BlobBuilder b = linear_graph();
  b.nodes()[0].params.build = [](flatbuffers::FlatBufferBuilder&,
                                  const NodeDesc&) {
    return flatbuffers::Offset<void>();
  };
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0", "no params table"}));
}

TEST(XnnpackMalformed, DynamicWeights) {
  BlobBuilder b;
  const uint32_t x = b.input({2, 3}, 0);
  const uint32_t w = b.input({4, 3}, 1);
  const uint32_t y = b.output({2, 4}, 2);
  b.node(NodeKind::XNNFullyConnected, {x, w}, y, fully_connected_params(false));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0", "filter (input 1) must be a constant"}));
}

TEST(XnnpackMalformed, InputUsedBeforeProduced) {
  BlobBuilder b;
  const uint32_t x = b.input({4}, 0);
  const uint32_t t = b.tensor({4});
  const uint32_t y = b.output({4}, 1);
  b.node(NodeKind::XNNAbs, {t}, y);
  b.node(NodeKind::XNNNegate, {x}, t);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (abs)", "value 1 is not"}));
}

TEST(XnnpackMalformed, OutputNeverProduced) {
  BlobBuilder b;
  const uint32_t x = b.input({4}, 0);
  const uint32_t y = b.output({4}, 1);
  const uint32_t t = b.tensor({4});
  b.node(NodeKind::XNNAbs, {x}, t);
  (void)y;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"output 0 (value 1) is not produced"}));
}

TEST(XnnpackMalformed, DuplicateExternalIndex) {
  BlobBuilder b;
  const uint32_t x0 = b.input({4}, 0);
  const uint32_t x1 = b.input({4}, 0);
  const uint32_t y = b.output({4}, 2);
  b.node(NodeKind::XNNAdd, {x0, x1}, y);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 1", "external_id 0 is out of range or taken"}));
}

TEST(XnnpackMalformed, QuantizedDatatypeWithoutParams) {
  BlobBuilder b = linear_graph();
  b.values()[0].datatype = fb_xnnpack::XNNDatatype::xnn_datatype_qint8;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 0", "qint8"}));
}

// x [1, 3, 3, 2] -> convert (qint8, value 1) -> conv2d (qcint8 filter
// [4, 1, 1, 2] with 4 scales along dim 0, value 2; qcint32 bias, value 3)
// -> qint8 (value 4) -> convert -> y.
BlobBuilder int8_conv_graph() {
  BlobBuilder b;
  const uint32_t x = b.input({1, 3, 3, 2}, 0);
  const uint32_t x_q = b.tensor({1, 3, 3, 2});
  b.values()[x_q].datatype = fb_xnnpack::XNNDatatype::xnn_datatype_qint8;
  b.values()[x_q].per_tensor = {{0.05f, 3}};
  const uint32_t w = b.tensor({4, 1, 1, 2});
  ValueDesc& wv = b.values()[w];
  wv.datatype = fb_xnnpack::XNNDatatype::xnn_datatype_qcint8;
  wv.is_constant = true;
  wv.bytes = std::vector<uint8_t>(8, 1);
  wv.channel_scales = {0.01f, 0.02f, 0.03f, 0.04f};
  const uint32_t bias = b.tensor({4});
  ValueDesc& bv = b.values()[bias];
  bv.datatype = fb_xnnpack::XNNDatatype::xnn_datatype_qcint32;
  bv.is_constant = true;
  bv.bytes = std::vector<uint8_t>(16, 0);
  bv.channel_scales = {0.0005f, 0.001f, 0.0015f, 0.002f};
  const uint32_t y_q = b.tensor({1, 3, 3, 4});
  b.values()[y_q].datatype = fb_xnnpack::XNNDatatype::xnn_datatype_qint8;
  b.values()[y_q].per_tensor = {{0.1f, -2}};
  const uint32_t y = b.output({1, 3, 3, 4}, 1);
  b.node(NodeKind::XNNConvert, {x}, x_q);
  b.node(NodeKind::XNNConv2d,
         {x_q, w, bias},
         y_q,
         conv_params(1, 1, 0, 1, 1, 2, 4));
  b.node(NodeKind::XNNConvert, {y_q}, y);
  return b;
}

// Each corrupted quantization parameter fails the load (init), naming the
// value (its index and id) and the field, before anything runs.
TEST(XnnpackMalformed, BadQuantizationParamsFailTheLoad) {
  {
    DelegateRunner runner;
    ASSERT_EQ(runner.init(int8_conv_graph().build()), Error::Ok);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    const char* name;
    std::function<void(std::vector<ValueDesc>&)> corrupt;
    std::vector<std::string> log;
  };
  const Case cases[] = {
      {"zero scale",
       [](auto& v) { v[1].per_tensor->first = 0.0f; },
       {"value 1 (id 1)", "scale 0 is not a positive number"}},
      {"negative scale",
       [](auto& v) { v[4].per_tensor->first = -0.1f; },
       {"value 4 (id 4)", "scale -0.1 is not a positive number"}},
      {"NaN scale",
       [nan](auto& v) { v[1].per_tensor->first = nan; },
       {"value 1 (id 1)", "scale nan is not a positive number"}},
      {"infinite scale",
       [inf](auto& v) { v[4].per_tensor->first = inf; },
       {"value 4 (id 4)", "scale inf is not a positive number"}},
      {"zero point above int8",
       [](auto& v) { v[1].per_tensor->second = 128; },
       {"value 1 (id 1)", "zero point 128 outside [-128, 127] of datatype qint8"}},
      {"zero point below int8",
       [](auto& v) { v[4].per_tensor->second = -129; },
       {"value 4 (id 4)", "zero point -129 outside [-128, 127]"}},
      {"zero channel scale",
       [](auto& v) { v[2].channel_scales[2] = 0.0f; },
       {"value 2 (id 2)", "scale 2 (0) is not a positive number"}},
      {"NaN bias scale",
       [nan](auto& v) { v[3].channel_scales[0] = nan; },
       {"value 3 (id 3)", "scale 0 (nan) is not a positive number"}},
      {"scale count below the channels",
       [](auto& v) { v[2].channel_scales.pop_back(); },
       {"value 2 (id 2)", "3 scales for 4 channels"}},
      {"scale count above the channels",
       [](auto& v) { v[3].channel_scales.push_back(0.1f); },
       {"value 3 (id 3)", "5 scales for 4 channels"}},
      {"channel dim out of range",
       [](auto& v) { v[2].channel_dim = 4; },
       {"value 2 (id 2)", "channel_dim 4 out of range for rank 4"}},
  };
  for (const Case& c : cases) {
    BlobBuilder b = int8_conv_graph();
    c.corrupt(b.values());
    LogCapture log;
    EXPECT_EQ(init_error(b.build()), Error::InvalidProgram) << c.name;
    EXPECT_TRUE(log.contains(c.log)) << c.name;
  }
}

TEST(XnnpackMalformed, ConvKernelLargerThanInput) {
  BlobBuilder b;
  const uint32_t x = b.input({1, 2, 2, 1}, 0);
  const uint32_t w = b.constant({1, 3, 3, 1}, random_values(9));
  const uint32_t y = b.output({1, 1, 1, 1}, 1);
  b.node(NodeKind::XNNConv2d, {x, w}, y, conv_params(3, 1, 0, 1, 1, 1, 1));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (conv2d)", "smaller than"}));
}

TEST(XnnpackMalformed, TransposePermNotAPermutation) {
  BlobBuilder b;
  const uint32_t x = b.input({2, 3}, 0);
  const uint32_t y = b.output({3, 3}, 1);
  b.node(NodeKind::XNNStaticTranspose, {x}, y, transpose_params({1, 1}));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (static_transpose)", "perm[1] = 1"}));
}

TEST(XnnpackMalformed, SliceOutOfBounds) {
  BlobBuilder b;
  const uint32_t x = b.input({4}, 0);
  const uint32_t y = b.output({3}, 1);
  b.node(NodeKind::XNNStaticSlice, {x}, y, slice_params({2}, {3}));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (static_slice)", "dim 0"}));
}

// A consistent graph whose intermediates are 2^63 bytes each: planning their
// memory fails with an error instead of aborting the process.
TEST(XnnpackMalformed, HugeIntermediateFailsCleanly) {
  BlobBuilder b;
  const uint32_t x = b.input({1, 1}, 0);
  const uint32_t padded = b.tensor({1u << 30, 1u << 31});
  const uint32_t squashed = b.tensor({1u << 30, 1u << 31});
  const uint32_t y = b.output({1, 1}, 1);
  b.node(NodeKind::XNNStaticConstantPad,
         {x},
         padded,
         pad_params({0, 0}, {(1u << 30) - 1, (1u << 31) - 1}, 0.0f));
  b.node(NodeKind::XNNTanh, {padded}, squashed);
  b.node(NodeKind::XNNStaticSlice, {squashed}, y, slice_params({0, 0}, {1, 1}));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::MemoryAllocationFailed);
  EXPECT_TRUE(log.contains({"between steps"}));
}

TEST(XnnpackMalformed, UnallocatableIntermediateFailsCleanly) {
  BlobBuilder b;
  const uint32_t x = b.input({1, 1}, 0);
  const uint32_t padded = b.tensor({1u << 30, 1u << 31});
  const uint32_t y = b.output({1, 1}, 1);
  b.node(NodeKind::XNNStaticConstantPad,
         {x},
         padded,
         pad_params({0, 0}, {(1u << 30) - 1, (1u << 31) - 1}, 0.0f));
  b.node(NodeKind::XNNStaticSlice, {padded}, y, slice_params({0, 0}, {1, 1}));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::MemoryAllocationFailed);
  EXPECT_TRUE(log.contains({"cannot allocate"}));
}

TEST(XnnpackMalformed, EmptyTensorsAreNotSupported) {
  BlobBuilder b;
  const uint32_t x = b.input({0, 3}, 0);
  const uint32_t y = b.output({0, 3}, 1);
  b.node(NodeKind::XNNAbs, {x}, y);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::NotSupported);
  EXPECT_TRUE(log.contains({"value 0", "empty tensors"}));
}

TEST(XnnpackMalformed, WrongInputDtype) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(linear_graph().build()), Error::Ok);
  const TensorPtr x =
      extension::make_tensor_ptr({2, 3}, std::vector<int32_t>(6));
  LogCapture log;
  EXPECT_EQ(runner.run({x}, {output_tensor({2, 4})}), Error::InvalidArgument);
  EXPECT_TRUE(log.contains({"input 0", "dtype Int", "expected Float"}));
}

TEST(XnnpackMalformed, WrongInputShape) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(linear_graph().build()), Error::Ok);
  std::vector<TensorPtr> out{output_tensor({2, 4})};
  LogCapture log;
  EXPECT_EQ(runner.run({input_tensor({2, 5}, random_values(10))}, out),
            Error::InvalidArgument);
  EXPECT_TRUE(log.contains({"input 0", "size 5 at dim 1 is above its upper bound 3"}));
}

TEST(XnnpackMalformed, WrongArgCount) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(linear_graph().build()), Error::Ok);
  std::vector<TensorPtr> out;
  LogCapture log;
  EXPECT_EQ(runner.run({input_tensor({2, 3}, random_values(6))}, out),
            Error::InvalidArgument);
  EXPECT_TRUE(log.contains({"1 args, expected 1 inputs then 1 outputs"}));
}

TEST(XnnpackMalformed, OutputOfWrongStaticShapeCannotResize) {
  DelegateRunner runner;
  ASSERT_EQ(runner.init(linear_graph().build()), Error::Ok);
  std::vector<TensorPtr> out{output_tensor({2, 5})};
  EXPECT_NE(runner.run({input_tensor({2, 3}, random_values(6))}, out),
            Error::Ok);
}

// Every single-byte corruption of a valid blob's header and flatbuffer (the
// constant bytes are plain data), and every truncation, either initializes
// (and runs) or fails with an error; none crashes.
// `stride` > 1 visits every stride-th byte, to bound the time of sweeps
// over large graphs.
void sweep_corruptions(const BlobBuilder& b,
                       const std::vector<TensorPtr>& inputs,
                       const std::vector<TensorPtr>& outputs,
                       size_t stride = 1) {
  const std::vector<uint8_t> valid = b.build();
  // Keeps one threadpool alive instead of one per delegate.
  const Threadpool pool = acquire_threadpool(0);
  {
    DelegateRunner runner;
    ASSERT_EQ(runner.init(valid), Error::Ok);
    ASSERT_EQ(runner.run(inputs, outputs), Error::Ok);
  }
  auto try_blob = [&](const std::vector<uint8_t>& blob) {
    DelegateRunner runner;
    if (runner.init(blob) == Error::Ok) {
      (void)runner.run(inputs, outputs);
    }
  };
  const size_t constant_offset = valid[kConstantOffsetField] |
                                 (size_t{valid[kConstantOffsetField + 1]} << 8) |
                                 (size_t{valid[kConstantOffsetField + 2]} << 16);
  for (size_t i = 0; i < constant_offset; i += stride) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0xff}}) {
      std::vector<uint8_t> blob = valid;
      blob[i] ^= flip;
      try_blob(blob);
    }
  }
  for (size_t size = 0; size < valid.size(); size += stride) {
    try_blob(std::vector<uint8_t>(valid.begin(), valid.begin() + size));
  }
}

TEST(XnnpackMalformed, CorruptionSweepConvTranspose) {
  BlobBuilder b;
  const uint32_t x = b.input({1, 4, 4, 2}, 0);
  const uint32_t w = b.constant({3, 3, 3, 2}, random_values(54));
  const uint32_t t = b.tensor({1, 4, 4, 3});
  const uint32_t y = b.output({1, 3, 4, 4}, 1);
  b.node(NodeKind::XNNConv2d, {x, w}, t, conv_params(3, 1, 1, 1, 1, 2, 3));
  b.node(NodeKind::XNNStaticTranspose, {t}, y, transpose_params({0, 3, 1, 2}));
  sweep_corruptions(b,
                    {input_tensor({1, 4, 4, 2}, random_values(32))},
                    {output_tensor({1, 3, 4, 4})});
}

// Pooling, broadcasting, padding, resizing, slicing and concatenation:
// more node tables and shape rules under corruption.
TEST(XnnpackMalformed, CorruptionSweepManyKinds) {
  BlobBuilder b;
  const uint32_t x = b.input({1, 6, 6, 2}, 0);
  const uint32_t bias = b.constant({2}, random_values(2));
  const uint32_t pooled = b.tensor({1, 3, 3, 2});
  const uint32_t added = b.tensor({1, 3, 3, 2});
  const uint32_t padded = b.tensor({1, 4, 5, 2});
  const uint32_t resized = b.tensor({1, 8, 10, 2});
  const uint32_t sliced = b.tensor({1, 4, 10, 2});
  const uint32_t y = b.output({1, 12, 10, 2}, 1);
  b.node(NodeKind::XNNMaxPooling2d, {x}, pooled, pool_params(2, 2, 0));
  b.node(NodeKind::XNNAdd, {pooled, bias}, added, {}, std::make_pair(0.0f, 6.0f));
  b.node(NodeKind::XNNStaticConstantPad,
         {added},
         padded,
         pad_params({0, 1, 0, 0}, {0, 0, 2, 0}, 0.5f));
  b.node(NodeKind::XNNStaticResizeBilinear2D,
         {padded},
         resized,
         resize_params(8, 10, false));
  b.node(NodeKind::XNNStaticSlice,
         {resized},
         sliced,
         slice_params({0, 2, 0, 0}, {1, 4, 10, 2}));
  b.node(NodeKind::XNNConcatenate2, {resized, sliced}, y, concatenate_params(1));
  sweep_corruptions(b,
                    {input_tensor({1, 6, 6, 2}, random_values(72))},
                    {output_tensor({1, 12, 10, 2})});
}

// Convolutions, fully connected, activations, softmax and batch matmul
// under corruption.
TEST(XnnpackMalformed, CorruptionSweepComputeKinds) {
  BlobBuilder b;
  const uint32_t x = b.input({1, 4, 4, 2}, 0);
  const uint32_t dw = b.constant({1, 3, 3, 4}, random_values(36));
  const uint32_t dw_bias = b.constant({4}, random_values(4));
  const uint32_t deconv_w = b.constant({2, 2, 2, 2}, random_values(16));
  const uint32_t slope = b.constant({2}, random_values(2));
  const uint32_t fc_w = b.constant({3, 2}, random_values(6));
  const uint32_t conv = b.tensor({1, 4, 4, 4});
  const uint32_t act = b.tensor({1, 4, 4, 4});
  const uint32_t up = b.tensor({1, 8, 8, 2});
  const uint32_t prelu = b.tensor({1, 8, 8, 2});
  const uint32_t avg = b.tensor({1, 4, 4, 2});
  const uint32_t fc = b.tensor({1, 4, 4, 3});
  const uint32_t flat = b.tensor({16, 3});
  const uint32_t soft = b.tensor({16, 3});
  const uint32_t bt = b.tensor({3, 16});
  const uint32_t mm = b.tensor({16, 16});
  const uint32_t y = b.output({16, 16}, 1);
  b.node(NodeKind::XNNDepthwiseConv2d,
         {x, dw, dw_bias},
         conv,
         conv_params(3, 1, 1, 1, 2, 1, 2));
  b.node(NodeKind::XNNHardswish, {conv}, act);
  b.node(
      NodeKind::XNNConvTranspose2d, {x, deconv_w}, up, conv_params(2, 2, 0, 1, 1, 2, 2));
  b.node(NodeKind::XNNPReLU, {up, slope}, prelu);
  b.node(NodeKind::XNNAvgPooling2d, {prelu}, avg, pool_params(2, 2, 0));
  b.node(NodeKind::XNNFullyConnected,
         {avg, fc_w},
         fc,
         fully_connected_params(false));
  b.node(NodeKind::XNNStaticReshape, {fc}, flat, reshape_params({16, 3}));
  b.node(NodeKind::XNNSoftmax, {flat}, soft);
  b.node(NodeKind::XNNStaticTranspose, {soft}, bt, transpose_params({1, 0}));
  b.node(NodeKind::XNNBatchMatrixMultiply, {soft, bt}, mm);
  b.node(NodeKind::XNNGelu, {mm}, y);
  sweep_corruptions(b,
                    {input_tensor({1, 4, 4, 2}, random_values(32))},
                    {output_tensor({16, 16})},
                    /*stride=*/4);
}


// The hostile-blob classes of issue #15: tensor flags, dims, node arities.

TEST(XnnpackMalformed, UnknownTensorFlags) {
  BlobBuilder b = linear_graph();
  b.values()[0].flags = 0x80;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 0", "flags 0x80"}));
}

TEST(XnnpackMalformed, TensorBothInputAndOutput) {
  BlobBuilder b = linear_graph();
  b.values()[2].flags = kInputFlag | kOutputFlag;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 2", "flags 0x3"}));
}

TEST(XnnpackMalformed, ConstantFlaggedAsInput) {
  BlobBuilder b = linear_graph();
  b.values()[1].flags = kInputFlag;
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 1", "constant cannot be an external input"}));
}

TEST(XnnpackMalformed, DimsWhoseElementCountOverflows) {
  BlobBuilder b = linear_graph();
  b.values()[0].dims = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"value 0", "element count overflows"}));
}

TEST(XnnpackMalformed, DimOfUint32Max) {
  BlobBuilder b = linear_graph();
  b.values()[0].dims = {UINT32_MAX, 3};
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (fully_connected)", "[4294967295, 4]"}));
}

TEST(XnnpackMalformed, TooManyDims) {
  BlobBuilder b = linear_graph();
  b.values()[0].dims = Dims(10000, 1);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::NotSupported);
  EXPECT_TRUE(log.contains({"value 0", "rank 10000 exceeds"}));
}

TEST(XnnpackMalformed, BinaryNodeWithOneInput) {
  BlobBuilder b;
  const uint32_t x = b.input({4}, 0);
  const uint32_t y = b.output({4}, 1);
  b.node(NodeKind::XNNAdd, {x}, y);
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  // The kind's table is read with two inputs: the second is the output's
  // slot, a value no earlier node produced.
  EXPECT_TRUE(log.contains({"node 0 (add)", "input 1", "is not a constant"}));
}

TEST(XnnpackMalformed, ConcatenateMissingAnInput) {
  BlobBuilder b;
  const uint32_t x0 = b.input({2}, 0);
  const uint32_t x1 = b.input({2}, 1);
  const uint32_t y = b.output({6}, 2);
  b.node(NodeKind::XNNConcatenate3, {x0, x1}, y, concatenate_params(0));
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (concatenate3)", "input 2", "id 4294967295"}));
}


// Found by fuzz_xnnpack_blob (test/fuzz/regressions/xnnpack_blob): a
// transpose without its perm vector and num_dims 0 was read as a null vector.
TEST(XnnpackMalformed, TransposeWithoutPerm) {
  BlobBuilder b;
  const uint32_t x = b.input({2, 3}, 0);
  const uint32_t y = b.output({3, 2}, 1);
  b.node(NodeKind::XNNStaticTranspose,
         {x},
         y,
         {[](flatbuffers::FlatBufferBuilder& f, const NodeDesc& n) {
           return fb_xnnpack::CreateXNNStaticTranspose(f, 0, 0, n.inputs[0], n.output)
               .Union();
         }});
  LogCapture log;
  EXPECT_EQ(init_error(b.build()), Error::InvalidProgram);
  EXPECT_TRUE(log.contains({"node 0 (static_transpose)", "perm is missing"}));
}

} // namespace
} // namespace testing
} // namespace xnnpack
} // namespace backends
} // namespace executorch
