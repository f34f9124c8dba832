#pragma once

// parallel_for: how kernels split work across threads, under upstream
// ExecuTorch's names. The runtime core has no threads: with
// ET_USE_THREADPOOL (defined for whoever links extension_threadpool) the
// functions are implemented there on the process-wide thread pool; without
// it they run everything on the calling thread.

#include <cstdint>

#include <executorch/runtime/core/function_ref.h>

namespace executorch {
namespace extension {

// Work items per chunk below which splitting does not pay, as PyTorch's.
constexpr int64_t kDefaultGrainSize = 32768;

#ifdef ET_USE_THREADPOOL

// Calls f(chunk_begin, chunk_end) over disjoint chunks covering
// [begin, end), possibly on several threads at once, and returns when all
// have run. Each chunk holds at least `grain_size` items (except when the
// range is smaller): a range of at most `grain_size` items, a call made
// from inside another parallel_for, or one under NoThreadPoolGuard runs
// on the calling thread. Returns false (and runs nothing) for a bad range
// or grain size. f may run concurrently with itself: it must only write
// what its chunk owns.
bool parallel_for(int64_t begin,
                  int64_t end,
                  int64_t grain_size,
                  ::executorch::runtime::FunctionRef<void(int64_t, int64_t)> f);

// The number of threads parallel_for may use (the pool's, at least 1).
int64_t get_thread_count();

// Inside parallel_for's f: the index of the running chunk, in
// [0, get_thread_count()); chunks that run at the same time have distinct
// indices, so per-thread scratch can be indexed by it. 0 outside.
int64_t get_thread_num();

#else // ET_USE_THREADPOOL

inline bool parallel_for(
    int64_t begin,
    int64_t end,
    int64_t grain_size,
    ::executorch::runtime::FunctionRef<void(int64_t, int64_t)> f) {
  if (begin < 0 || end < begin || grain_size <= 0) {
    return false;
  }
  if (end > begin) {
    f(begin, end);
  }
  return true;
}

inline int64_t get_thread_count() {
  return 1;
}

inline int64_t get_thread_num() {
  return 0;
}

#endif // ET_USE_THREADPOOL

} // namespace extension
} // namespace executorch
