#include <executorch/kernels/optimized/cpu/scratch.h>

#include <cstdlib>
#include <memory>

namespace executorch {
namespace kernels {
namespace optimized {

namespace {

struct FreeDeleter {
  void operator()(void* p) const {
    std::free(p);
  }
};

} // namespace

void* thread_scratch(size_t bytes) {
  thread_local std::unique_ptr<void, FreeDeleter> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    // aligned_alloc wants a multiple of the alignment.
    const size_t rounded = (bytes + 63) / 64 * 64;
    buffer.reset(std::aligned_alloc(64, rounded));
    capacity = buffer ? rounded : 0;
  }
  return buffer.get();
}

} // namespace optimized
} // namespace kernels
} // namespace executorch
