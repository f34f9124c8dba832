#include <executorch/runtime/testing/heap_allocations.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> g_heap_allocations{0};
} // namespace

void* operator new(size_t size) {
  ++g_heap_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}

// new (std::nothrow) too: its memory goes to the operator delete below,
// which must get what malloc gave (AddressSanitizer reports the mismatch).
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  ++g_heap_allocations;
  return std::malloc(size == 0 ? 1 : size);
}

void operator delete(void* p) noexcept {
  std::free(p);
}

void operator delete(void* p, size_t) noexcept {
  std::free(p);
}

namespace executorch {
namespace runtime {
namespace testing {

long heap_allocations() {
  return g_heap_allocations.load();
}

} // namespace testing
} // namespace runtime
} // namespace executorch
