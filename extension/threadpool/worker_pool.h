#pragma once

// WorkerPool: the threads under the process-wide pool (threadpool.h) and
// under the pthreadpool C API that this library implements
// (pthreadpool_api.cpp), so that XNNPACK and the optimized kernels run on
// the same threads.
//
// A job is a range of items cut into chunks that the calling thread and the
// workers claim. Thread k of n (the caller is 0, the workers 1..n-1 in the
// order they started) first claims from its own share, items [k * items /
// n, (k + 1) * items / n), then from the others' when its own is done. Why
// shares rather than one counter: XNNPACK's operators and the optimized
// kernels cut their work in row-major order (output rows, then channels),
// so with fixed shares each thread writes the same rows in consecutive
// jobs and reads what it wrote from its own cache; claimed first-come,
// about half a layer's input sat in the other core's cache, which cost
// MobileNetV2's depthwise layers most of their 2-thread gain (README.md).
// Two rules make short jobs cheap:
// - after a job a worker spins for `spin` before it sleeps, so jobs that
//   follow each other closely never pay a wake-up (a futex wake costs
//   ~20 us on a 2-core VM, longer than many XNNPACK operators); it yields
//   its core while spinning, so a thread waiting for that core (the
//   caller, on a busy machine) runs;
// - the caller never waits for a worker that has not joined the job: it
//   runs every chunk nobody claimed, closes the job, and waits only for the
//   workers that joined to finish their chunks. A sleeping or descheduled
//   worker costs the caller nothing.
//
// Ownership: the pool owns its threads (threads() - 1 workers; the caller
// is the other) and joins them when destroyed.
// Threads: run() may be called from any thread; concurrent calls run one
// after the other. A run() from inside a chunk (of any pool) runs all its
// items on that thread.
// fork(): the child gets a copy of the pool but none of its workers, and
// possibly its locks held or waited on by threads it does not have. In the
// child such a pool is orphaned(): it runs every job on the caller, and its
// destructor neither joins nor touches what the workers shared.
// Tests: worker_pool_test.cpp.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <pthread.h>

namespace executorch {
namespace extension {
namespace threadpool {

// 0 in the process that made the first pool; one more in each process
// forked from one that had made a pool, counted at the fork.
uint32_t fork_generation();

class WorkerPool final {
 public:
  // Runs items [begin, end) of a job.
  using ChunkFunction = void (*)(void* context, size_t begin, size_t end);

  // run() flags, with pthreadpool's values (PTHREADPOOL_FLAG_*).
  // Flush denormals to zero on every thread while it runs the job.
  static constexpr uint32_t kDisableDenormals = 1;
  // Workers sleep right after this job instead of spinning.
  static constexpr uint32_t kYieldWorkers = 2;

  // The name of the worker threads (ps, top, perf, /proc/PID/task/*/comm).
  static constexpr const char* kWorkerThreadName = "et_pool_worker";

  // How long a worker spins for the next job before it sleeps.
  static constexpr std::chrono::microseconds kDefaultSpin{300};

  // A pool of `threads` threads counting the caller (>= 1). Returns null
  // when a worker thread cannot be started.
  static std::unique_ptr<WorkerPool> create(
      size_t threads, std::chrono::nanoseconds spin = kDefaultSpin);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // 1 in an orphaned pool.
  size_t threads() const {
    return orphaned() ? 1 : workers_.size() + 1;
  }

  // Whether this process was forked from the one that made this pool.
  bool orphaned() const {
    return fork_generation() != generation_;
  }

  // Calls fn(context, 0, items) on this thread, flags applied: what run()
  // does on a pool of one thread.
  static void run_on_caller(ChunkFunction fn,
                            void* context,
                            size_t items,
                            uint32_t flags);

  // Calls fn on chunks that cover [0, items) exactly once; returns when
  // every chunk has returned. Called from inside a chunk: fn(context, 0,
  // items) on this thread.
  void run(ChunkFunction fn, void* context, size_t items, uint32_t flags);

 private:
  WorkerPool(size_t threads, std::chrono::nanoseconds spin);
  static void* work_entry(void* pool);
  void work();
  uint64_t wait_for_job(uint32_t seen_job, bool spin);
  // Runs chunks of the current job, from the share of thread `first_share`
  // first, until every item is claimed.
  void run_chunks(size_t first_share);

  const size_t thread_count_;
  const std::chrono::nanoseconds spin_;
  const uint32_t generation_;

  // The current job: written by the caller before it publishes the job in
  // state_, read by the workers that joined it.
  ChunkFunction fn_ = nullptr;
  void* context_ = nullptr;
  uint32_t flags_ = 0;

  // One thread's share of the current job: the first item nobody has
  // claimed, and the end. A cache line each, so that claims from two shares
  // do not contend.
  struct alignas(64) Share {
    std::atomic<size_t> next{0};
    size_t end = 0;
  };
  // threads() of them, made with the pool (run() allocates nothing).
  std::unique_ptr<Share[]> shares_;
  // The share index the next worker to start takes (1, 2, ...).
  std::atomic<size_t> next_worker_share_{1};
  // Job number << 32 | kOpen while workers may join | workers inside.
  alignas(64) std::atomic<uint64_t> state_{0};
  alignas(64) std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stopping_{false};

  // Where workers sleep. On the heap so that an orphaned pool can leak it:
  // destroying a condition variable that the parent's workers were
  // waiting on blocks forever.
  struct Sleep {
    std::mutex mutex;
    std::condition_variable wake;
  };
  std::unique_ptr<Sleep> sleep_;
  std::mutex submit_mutex_; // one job at a time
  // pthreads rather than std::thread: starting one may fail without
  // exceptions, which this library is built without.
  std::vector<pthread_t> workers_;
};

} // namespace threadpool
} // namespace extension
} // namespace executorch
