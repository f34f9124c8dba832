// Which pool an XNNPACK runtime runs on (compiler.h's runtime_pool): the
// calling thread's for runs of memory-bound nodes over few elements, as an
// int8 MobileNetV2's adds; the delegate's pool for larger ones and for any
// run with a node that computes more per element.

#include <gtest/gtest.h>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/compiler.h>
#include <executorch/backends/xnnpack/runtime/host_util.h>

namespace {

using executorch::backends::xnnpack::Dims;
using executorch::backends::xnnpack::Graph;
using executorch::backends::xnnpack::kMinParallelStreamElements;
using executorch::backends::xnnpack::kNoValue;
using executorch::backends::xnnpack::Node;
using executorch::backends::xnnpack::runtime_pool;
using fb_xnnpack::XNodeUnion;

// A node of `kind` from values `inputs` to value `output`.
Node node(XNodeUnion kind, std::vector<uint32_t> inputs, uint32_t output) {
  Node n;
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  return n;
}

TEST(XnnpackRuntimePoolTest, SmallMemoryBoundRunsStayOnTheCallingThread) {
  pthreadpool_t pool = pthreadpool_create(2);
  // Values 0-2: [1, 28, 28, 24] (five of them are under the threshold);
  // 3-5: [1, 128, 128, 24] (three of them are over it); 6: [1, 24].
  Graph graph;
  graph.values.resize(7);
  for (uint32_t v = 0; v < 3; ++v) {
    graph.values[v].dims = Dims{1, 28, 28, 24};
    graph.values[v + 3].dims = Dims{1, 128, 128, 24};
  }
  graph.values[6].dims = Dims{1, 24};
  ASSERT_LT(5 * 28 * 28 * 24, kMinParallelStreamElements);
  ASSERT_GE(3 * 128 * 128 * 24, kMinParallelStreamElements);
  graph.nodes = {
      node(XNodeUnion::XNNAdd, {0, 1}, 2),
      node(XNodeUnion::XNNClamp, {2}, 1),
      node(XNodeUnion::XNNAdd, {3, 4}, 5),
      node(XNodeUnion::XNNGlobalAvgPooling2d, {0}, 6),
      node(XNodeUnion::XNNFullyConnected, {6, 6, kNoValue}, 6),
  };
  EXPECT_EQ(runtime_pool(graph, 0, 1, pool), nullptr);
  EXPECT_EQ(runtime_pool(graph, 0, 2, pool), nullptr);
  EXPECT_EQ(runtime_pool(graph, 3, 4, pool), nullptr);
  // Over the threshold, alone or summed with the others.
  EXPECT_EQ(runtime_pool(graph, 2, 3, pool), pool);
  EXPECT_EQ(runtime_pool(graph, 0, 3, pool), pool);
  // A fully connected node, however small.
  EXPECT_EQ(runtime_pool(graph, 3, 5, pool), pool);
  EXPECT_EQ(runtime_pool(graph, 4, 5, pool), pool);
  pthreadpool_destroy(pool);
}

} // namespace
