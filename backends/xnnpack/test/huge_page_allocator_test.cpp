// The XNNPACK allocator (runtime/huge_page_allocator.h): blocks read back
// what was written and are aligned as asked at every size; blocks of at
// least one huge page have their whole huge pages advised for huge pages;
// and XNNPACK, initialized through initialize_xnnpack, packs a fully
// connected operator's weights into advised memory. (That small blocks and
// the tails of large ones are not advised cannot be checked exactly: freed
// memory keeps its advice, and malloc may hand it out again.)

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/huge_page_allocator.h>

namespace {

using executorch::backends::xnnpack::huge_page_allocator;
using executorch::backends::xnnpack::huge_page_size;
using executorch::backends::xnnpack::initialize_xnnpack;

struct Mapping {
  uintptr_t begin;
  uintptr_t end;
  bool huge; // VmFlags has "hg" (MADV_HUGEPAGE)
};

std::vector<Mapping> mappings() {
  std::vector<Mapping> out;
  FILE* file = std::fopen("/proc/self/smaps", "r");
  if (file == nullptr) {
    return out;
  }
  char line[512];
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    unsigned long long begin = 0, end = 0;
    if (std::sscanf(line, "%llx-%llx ", &begin, &end) == 2 &&
        std::strchr(line, '-') < std::strchr(line, ' ')) {
      out.push_back(
          {static_cast<uintptr_t>(begin), static_cast<uintptr_t>(end), false});
    } else if (std::strncmp(line, "VmFlags:", 8) == 0 && !out.empty()) {
      out.back().huge = std::strstr(line, " hg") != nullptr;
    }
  }
  std::fclose(file);
  return out;
}

// Whether the page holding `address` is in a mapping advised for huge pages.
bool advised(const void* address) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  for (const Mapping& m : mappings()) {
    if (m.begin <= a && a < m.end) {
      return m.huge;
    }
  }
  return false;
}

size_t advised_bytes() {
  size_t total = 0;
  for (const Mapping& m : mappings()) {
    total += m.huge ? m.end - m.begin : 0;
  }
  return total;
}

// Fills a block with a pattern and checks it back.
void check_block(void* block, size_t size) {
  auto* bytes = static_cast<uint8_t*>(block);
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<uint8_t>(i * 31 + 7);
  }
  for (size_t i = 0; i < size; ++i) {
    ASSERT_EQ(bytes[i], static_cast<uint8_t>(i * 31 + 7)) << "byte " << i;
  }
}

TEST(HugePageAllocator, BlocksOfEverySizeReadBackAndAreAligned) {
  const xnn_allocator& a = huge_page_allocator();
  const size_t huge = huge_page_size();
  const size_t big = huge == 0 ? size_t{2} << 20 : huge;
  for (size_t alignment : {size_t{1}, size_t{16}, size_t{64}, size_t{4096}}) {
    for (size_t size : {size_t{1},
                        size_t{100},
                        size_t{4099},
                        big - 1,
                        big,
                        big + 12345,
                        3 * big}) {
      void* block = a.aligned_allocate(a.context, alignment, size);
      ASSERT_NE(block, nullptr) << size << " bytes";
      EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u)
          << size << " bytes aligned to " << alignment;
      check_block(block, size);
      a.aligned_deallocate(a.context, block);
    }
  }
  a.aligned_deallocate(a.context, nullptr);
}

TEST(HugePageAllocator, PlainBlocksAndReallocationKeepTheirBytes) {
  const xnn_allocator& a = huge_page_allocator();
  void* block = a.allocate(a.context, 1000);
  ASSERT_NE(block, nullptr);
  check_block(block, 1000);
  void* grown = a.reallocate(a.context, block, 5 << 20);
  ASSERT_NE(grown, nullptr);
  const auto* bytes = static_cast<const uint8_t*>(grown);
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(bytes[i], static_cast<uint8_t>(i * 31 + 7)) << "byte " << i;
  }
  a.deallocate(a.context, grown);
  a.deallocate(a.context, nullptr);
}

TEST(HugePageAllocator, WholeHugePagesOfLargeBlocksAreAdvised) {
  const size_t huge = huge_page_size();
  if (huge == 0) {
    GTEST_SKIP() << "no transparent huge pages here";
  }
  const xnn_allocator& a = huge_page_allocator();
  const size_t tail = 12345;
  const size_t size = 2 * huge + tail;
  auto* block = static_cast<uint8_t*>(a.aligned_allocate(a.context, 64, size));
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % huge, 0u);
  EXPECT_TRUE(advised(block));
  EXPECT_TRUE(advised(block + 2 * huge - 1));
  check_block(block, size);
  a.aligned_deallocate(a.context, block);
}

TEST(HugePageAllocator, XnnpackPacksWeightsIntoAdvisedMemory) {
  const size_t huge = huge_page_size();
  if (huge == 0) {
    GTEST_SKIP() << "no transparent huge pages here";
  }
  ASSERT_EQ(initialize_xnnpack(), xnn_status_success);
  // Weights larger than all memory advised so far and two huge pages more:
  // even if XNNPACK's block reuses freed advised memory, at least one huge
  // page of it is advised anew.
  const size_t before = advised_bytes();
  const size_t inputs = 1024;
  const size_t outputs = (before + 2 * huge) / (inputs * sizeof(float)) + 1;
  std::vector<float> weights(inputs * outputs, 0.5f);
  xnn_operator_t op = nullptr;
  ASSERT_EQ(xnn_create_fully_connected_nc_f32(inputs,
                                              outputs,
                                              inputs,
                                              outputs,
                                              weights.data(),
                                              /*bias=*/nullptr,
                                              -INFINITY,
                                              INFINITY,
                                              /*flags=*/0,
                                              &op),
            xnn_status_success);
  EXPECT_GE(advised_bytes(), before + huge);
  xnn_delete_operator(op);
}

} // namespace
