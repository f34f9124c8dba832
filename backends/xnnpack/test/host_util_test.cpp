// gather (runtime/host_util.h) against an element-by-element reference: the
// permutations of a 4-D tensor (the NCHW to NHWC transpose takes a path of
// its own), a strided slice, element sizes 1, 2, 4 and 8, odd sizes, on one
// thread and on a pool.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/host_util.h>

namespace {

using executorch::backends::xnnpack::Dims;
using executorch::backends::xnnpack::gather;

// Element o of the output (row-major over out_dims) is element base +
// sum(index_k * step[k]) of the input; elements of `size` bytes.
std::vector<uint8_t> reference(const std::vector<uint8_t>& in,
                               size_t base,
                               const std::vector<size_t>& step,
                               const Dims& out_dims,
                               size_t size) {
  size_t numel = 1;
  for (size_t d : out_dims) {
    numel *= d;
  }
  std::vector<uint8_t> out(numel * size);
  for (size_t o = 0; o < numel; ++o) {
    size_t rest = o, offset = base;
    for (size_t d = out_dims.size(); d-- > 0;) {
      offset += (rest % out_dims[d]) * step[d];
      rest /= out_dims[d];
    }
    std::memcpy(out.data() + o * size, in.data() + offset * size, size);
  }
  return out;
}

void expect_gather(const std::vector<uint8_t>& in,
                   size_t base,
                   const std::vector<size_t>& step,
                   const Dims& out_dims,
                   size_t size) {
  const std::vector<uint8_t> want = reference(in, base, step, out_dims, size);
  pthreadpool_t pool = pthreadpool_create(3);
  for (pthreadpool_t p : {pthreadpool_t(nullptr), pool}) {
    std::vector<uint8_t> got(want.size(), 0xEE);
    gather(in.data(), base, step.data(), out_dims, size, got.data(), p);
    EXPECT_EQ(got, want) << "element size " << size << (p ? ", 3 threads" : "");
  }
  pthreadpool_destroy(pool);
}

TEST(HostGather, EveryPermutationOfA4dTensorEqualsTheReference) {
  const std::array<size_t, 4> dims = {2, 3, 5, 7};
  const std::array<size_t, 4> strides = {105, 35, 7, 1};
  for (size_t size : {1, 2, 4, 8}) {
    std::vector<uint8_t> in(210 * size);
    std::iota(in.begin(), in.end(), uint8_t(0));
    std::array<size_t, 4> perm = {0, 1, 2, 3};
    do {
      Dims out_dims;
      std::vector<size_t> step;
      for (size_t p : perm) {
        out_dims.push_back(dims[p]);
        step.push_back(strides[p]);
      }
      SCOPED_TRACE(::testing::Message()
                   << "perm " << perm[0] << perm[1] << perm[2] << perm[3]);
      expect_gather(in, 0, step, out_dims, size);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

// MobileNetV2's input: [1, 3, 9, 11] to [1, 9, 11, 3], the transposed
// last two dims of a slice (an offset, a row step of 2), and an attention's
// K^T ([3, 197, 64] to [3, 64, 197]; floats go through 4 x 4 blocks, whose
// edges the odd sizes reach).
TEST(HostGather, TransposedLastDimsOfInputsAndSlices) {
  for (size_t size : {1, 2, 4, 8}) {
    // Random bytes: a byte counter would repeat every 256 bytes, and
    // elements that far apart would look alike.
    std::vector<uint8_t> in(3 * 197 * 64 * size);
    std::mt19937 random(7);
    for (uint8_t& byte : in) {
      byte = static_cast<uint8_t>(random());
    }
    expect_gather(in, 0, {297, 11, 1, 99}, {1, 9, 11, 3}, size);
    expect_gather(in, 5, {100, 1, 22}, {2, 4, 6}, size);
    expect_gather(in, 0, {197 * 64, 1, 64}, {3, 64, 197}, size);
    expect_gather(in, 3, {37 * 13, 1, 13}, {2, 13, 37}, size);
  }
}

} // namespace
