#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>

#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

using executorch::extension::MallocMemoryAllocator;

namespace {

TEST(MallocMemoryAllocatorTest, HonorsAlignment) {
  MallocMemoryAllocator allocator;
  for (size_t alignment : {1, 2, 8, 16, 64, 256, 4096}) {
    for (size_t size : {0, 1, 3, 100, 5000}) {
      void* p = allocator.allocate(size, alignment);
      ASSERT_NE(p, nullptr) << size << " @ " << alignment;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
      std::memset(p, 0xab, size);
    }
  }
}

TEST(MallocMemoryAllocatorTest, AllocationsAreDistinctAndUsableAfterMore) {
  MallocMemoryAllocator allocator;
  auto* first = allocator.allocateList<int32_t>(16);
  ASSERT_NE(first, nullptr);
  for (int i = 0; i < 16; ++i) {
    first[i] = i;
  }
  // Many later allocations never move or overlap earlier ones.
  for (int i = 0; i < 1000; ++i) {
    auto* other = allocator.allocateList<int32_t>(16);
    ASSERT_NE(other, nullptr);
    std::memset(other, 0xff, 16 * sizeof(int32_t));
  }
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(first[i], i);
  }
}

TEST(MallocMemoryAllocatorTest, RejectsBadRequests) {
  MallocMemoryAllocator allocator;
  EXPECT_EQ(allocator.allocate(8, 0), nullptr);
  EXPECT_EQ(allocator.allocate(8, 24), nullptr);
  EXPECT_EQ(allocator.allocate(SIZE_MAX, 16), nullptr);
  EXPECT_EQ(allocator.allocateList<int64_t>(SIZE_MAX / 4), nullptr);
}

TEST(MallocMemoryAllocatorTest, ResetReleasesAndAllowsReuse) {
  MallocMemoryAllocator allocator;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 100; ++i) {
      ASSERT_NE(allocator.allocate(1024), nullptr);
    }
    allocator.reset();
  }
  EXPECT_NE(allocator.allocateInstance<double>(), nullptr);
}

} // namespace
