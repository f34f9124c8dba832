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

namespace internal {
// Work items per chunk below which splitting does not pay, as PyTorch's
// (upstream's name).
constexpr int64_t GRAIN_SIZE = 32768;
} // namespace internal

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
// indices, so per-thread scratch can be indexed by it (a range run inline
// as one chunk is chunk 0). Elsewhere, what set_thread_num last set on this
// thread (0 if nothing did).
int64_t get_thread_num();

// Sets what get_thread_num() returns on this thread outside parallel_for's
// chunks, for threads a client runs itself (upstream's API). It does not
// make the thread count as inside a parallel_for.
void set_thread_num(int64_t thread_num);

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

// Without a pool every thread is thread 0 (no thread-local storage here:
// the core also builds for bare-metal targets).
inline void set_thread_num(int64_t /*thread_num*/) {}

#endif // ET_USE_THREADPOOL

} // namespace extension
} // namespace executorch

// Upstream's deprecated spelling, still used by older kernels.
namespace torch {
namespace executor {
using ::executorch::extension::get_thread_num;
using ::executorch::extension::parallel_for;
using ::executorch::extension::set_thread_num;
} // namespace executor
} // namespace torch
