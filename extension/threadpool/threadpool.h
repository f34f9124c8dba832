#pragma once

// The process-wide thread pool, under upstream ExecuTorch's names. One pool
// serves the optimized kernels (through parallel_for,
// <executorch/runtime/kernel/thread_parallel_interface.h>) and the XNNPACK
// delegate (through its pthreadpool), so a program never runs two pools
// that compete for the same cores.
//
// Threads: every function here may be called from any thread. Work
// submitted from two threads at once runs one submission after the other.
// The pool is created on first use with one thread per performant core this
// process may run on (cpuinfo_utils.h; the caller, which always takes part,
// counts as one).
// fork(): in the child, the first use of the process-wide pool replaces it
// with a new pool of as many threads (a fork copies no threads). Users
// that kept the parent's pool (share_pthreadpool(), e.g. XNNPACK runtimes
// created before the fork) go on using it, on the calling thread alone.
// Tests: threadpool_test.cpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include <executorch/runtime/core/function_ref.h>

struct pthreadpool;

namespace executorch {
namespace extension {
namespace threadpool {

class ThreadPool final {
 public:
  // thread_count 0: the number of performant cores
  // (cpuinfo::get_num_performant_cores()).
  explicit ThreadPool(size_t thread_count = 0);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t get_thread_count() const;

  // Replaces the pool's threads with `num_threads` (0: the number of
  // performant cores); a pool that already has that many threads is kept, so
  // that its users keep sharing it. Unsafe in upstream's sense only: work
  // already running finishes on the old threads, and users that hold the old
  // pthreadpool (share_pthreadpool(), e.g. XNNPACK runtimes created before)
  // keep it alive and keep using it until they go away. Returns false if the
  // threads could not be created (the old pool stays).
  bool _unsafe_reset_threadpool(uint32_t num_threads);

  // Lets go of the pool's threads: until the next _unsafe_reset_threadpool,
  // get_thread_count() is 1, get_pthreadpool() is null and run() calls fn on
  // the calling thread. Unsafe in the same sense: users that hold the pool
  // (share_pthreadpool()) keep its threads until they let go of it.
  void _unsafe_destroy_threadpool();

  // Calls fn(i) for every i in [0, range), spread over the pool's threads;
  // returns when all calls have returned.
  void run(::executorch::runtime::FunctionRef<void(size_t)> fn, size_t range);

  // The current pthreadpool, for libraries built on it (XNNPACK). It stays
  // valid until the next _unsafe_reset_threadpool (or fork);
  // share_pthreadpool() keeps it alive beyond that.
  pthreadpool* get_pthreadpool() const;
  std::shared_ptr<pthreadpool> share_pthreadpool() const;

 private:
  friend ThreadPool* get_threadpool();

  // pool_, first replaced if this process was forked since it was made
  // (mutable for that). Needs mutex_.
  const std::shared_ptr<pthreadpool>& current() const;
  void set_pool(std::shared_ptr<pthreadpool> pool, size_t threads) const;

  mutable std::mutex mutex_; // guards the fields below (not the pool's use)
  mutable std::shared_ptr<pthreadpool> pool_;
  mutable size_t pool_threads_ = 0;
  mutable uint32_t pool_generation_ = 0;
};

// The process-wide pool, created on first call. Never null.
ThreadPool* get_threadpool();

// get_threadpool()->get_pthreadpool().
pthreadpool* get_pthreadpool();

// The number of cores this process may run on (its CPU affinity), >= 1.
size_t cores_available();

} // namespace threadpool
} // namespace extension
} // namespace executorch

// Upstream's deprecated spelling, still used by older clients.
namespace torch {
namespace executorch {
namespace threadpool {
using ::executorch::extension::threadpool::get_pthreadpool;
using ::executorch::extension::threadpool::get_threadpool;
using ::executorch::extension::threadpool::ThreadPool;
} // namespace threadpool
} // namespace executorch
} // namespace torch
