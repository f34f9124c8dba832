#pragma once

// Test helper: counts the test binary's operator new calls, so a test can
// show that a call allocates nothing from the C++ heap:
//
//   const long before = heap_allocations();
//   method.execute();
//   EXPECT_EQ(heap_allocations() - before, 0);
//
// heap_allocations.cpp replaces the global operator new and delete (malloc
// and free underneath) for every binary that links the
// executorch_heap_allocations library and calls heap_allocations(); the
// count is process-wide and thread-safe. Used by xnnpack_pte_test,
// optimized_program_test and custom_ops_test.

namespace executorch {
namespace runtime {
namespace testing {

// operator new calls in this process so far.
long heap_allocations();

} // namespace testing
} // namespace runtime
} // namespace executorch
