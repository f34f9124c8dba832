#include <executorch/extension/threadpool/worker_pool.h>

#include <algorithm>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace executorch {
namespace extension {
namespace threadpool {

namespace {

constexpr uint64_t kOpen = uint64_t{1} << 31;
constexpr uint64_t kJoinedMask = kOpen - 1;

// Whether this thread is running a chunk of some pool's job: a run() from
// inside one (e.g. a kernel that splits its work, called by a task that
// XNNPACK split) runs on this thread instead of waiting on a pool that may
// be waiting for it.
thread_local bool running_a_chunk = false;

class ChunkScope {
 public:
  ChunkScope() : previous_(running_a_chunk) {
    running_a_chunk = true;
  }
  ~ChunkScope() {
    running_a_chunk = previous_;
  }
  ChunkScope(const ChunkScope&) = delete;
  ChunkScope& operator=(const ChunkScope&) = delete;

 private:
  const bool previous_;
};

uint32_t job_number(uint64_t state) {
  return static_cast<uint32_t>(state >> 32);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Flushes denormals to zero on this thread while alive, if asked to.
class DenormalsScope {
 public:
  explicit DenormalsScope(bool disable) : active_(disable) {
    if (!active_) {
      return;
    }
#if defined(__x86_64__) || defined(__i386__)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | 0x8040); // flush-to-zero, denormals-are-zero
#elif defined(__aarch64__)
    uint64_t fpcr;
    asm volatile("mrs %0, fpcr" : "=r"(fpcr));
    saved_ = fpcr;
    asm volatile("msr fpcr, %0" : : "r"(fpcr | (uint64_t{1} << 24)));
#endif
  }
  ~DenormalsScope() {
    if (!active_) {
      return;
    }
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(static_cast<unsigned>(saved_));
#elif defined(__aarch64__)
    asm volatile("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  DenormalsScope(const DenormalsScope&) = delete;
  DenormalsScope& operator=(const DenormalsScope&) = delete;

 private:
  const bool active_;
  uint64_t saved_ = 0;
};

std::atomic<uint32_t> forks{0};

void count_fork_in_child() {
  forks.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

uint32_t fork_generation() {
  // Registered before the first pool exists, so every fork that copies a
  // pool is counted.
  static const bool watching =
      pthread_atfork(nullptr, nullptr, &count_fork_in_child) == 0;
  (void)watching;
  return forks.load(std::memory_order_relaxed);
}

std::unique_ptr<WorkerPool> WorkerPool::create(size_t threads,
                                               std::chrono::nanoseconds spin) {
  std::unique_ptr<WorkerPool> pool(
      new WorkerPool(std::max<size_t>(threads, 1), spin));
  if (pool->threads() != pool->thread_count_) {
    return nullptr; // the destructor stops the workers that did start
  }
  return pool;
}

WorkerPool::WorkerPool(size_t threads, std::chrono::nanoseconds spin)
    : thread_count_(threads),
      spin_(spin),
      generation_(fork_generation()),
      shares_(new Share[threads]),
      sleep_(new Sleep) {
  workers_.reserve(threads - 1);
  for (size_t i = 1; i < threads; ++i) {
    pthread_t worker;
    if (pthread_create(&worker, nullptr, &WorkerPool::work_entry, this) != 0) {
      break;
    }
    workers_.push_back(worker);
  }
}

void* WorkerPool::work_entry(void* pool) {
#if defined(__linux__)
  pthread_setname_np(pthread_self(), kWorkerThreadName); // for profilers
#endif
  static_cast<WorkerPool*>(pool)->work();
  return nullptr;
}

WorkerPool::~WorkerPool() {
  if (orphaned()) {
    (void)sleep_.release(); // the workers are the parent's
    return;
  }
  stopping_.store(true, std::memory_order_seq_cst);
  { std::lock_guard<std::mutex> lock(sleep_->mutex); }
  sleep_->wake.notify_all();
  for (pthread_t worker : workers_) {
    pthread_join(worker, nullptr);
  }
}

void WorkerPool::run_on_caller(ChunkFunction fn,
                               void* context,
                               size_t items,
                               uint32_t flags) {
  if (items != 0) {
    DenormalsScope denormals((flags & kDisableDenormals) != 0);
    fn(context, 0, items);
  }
}

void WorkerPool::run(ChunkFunction fn,
                     void* context,
                     size_t items,
                     uint32_t flags) {
  if (workers_.empty() || items <= 1 || running_a_chunk || orphaned()) {
    run_on_caller(fn, context, items, flags);
    return;
  }
  DenormalsScope denormals((flags & kDisableDenormals) != 0);
  std::lock_guard<std::mutex> submit(submit_mutex_);
  fn_ = fn;
  context_ = context;
  flags_ = flags;
  const size_t shares = threads();
  // items * k / shares, without overflow for any items.
  const auto boundary = [&](size_t k) {
    return items / shares * k + items % shares * k / shares;
  };
  for (size_t k = 0; k < shares; ++k) {
    shares_[k].next.store(boundary(k), std::memory_order_relaxed);
    shares_[k].end = boundary(k + 1);
  }
  // seq_cst pairs with the sleeping worker's: either it sees the new job
  // before it sleeps, or this thread sees it counted among the sleepers.
  const uint64_t job =
      (uint64_t{job_number(state_.load(std::memory_order_relaxed))} + 1) << 32;
  state_.store(job | kOpen, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) {
    { std::lock_guard<std::mutex> lock(sleep_->mutex); }
    sleep_->wake.notify_all();
  }

  run_chunks(/*first_share=*/0);

  // Every item is claimed: close the job to latecomers and wait for the
  // workers inside to finish their chunks.
  state_.fetch_and(~kOpen, std::memory_order_acq_rel);
  for (unsigned spins = 0;
       (state_.load(std::memory_order_acquire) & kJoinedMask) != 0;
       ++spins) {
    if (spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield(); // the worker was descheduled mid-chunk
    }
  }
}

void WorkerPool::run_chunks(size_t first_share) {
  ChunkScope scope;
  const size_t shares = threads();
  for (size_t i = 0; i < shares; ++i) {
    Share& share = shares_[(first_share + i) % shares];
    // Halves of what is left: few claims, and small last chunks for the
    // threads that finish their own share early.
    size_t first = share.next.load(std::memory_order_relaxed);
    while (first < share.end) {
      const size_t take = std::max<size_t>(1, (share.end - first) / 2);
      if (share.next.compare_exchange_weak(
              first, first + take, std::memory_order_relaxed)) {
        fn_(context_, first, first + take);
        first = share.next.load(std::memory_order_relaxed);
      }
    }
  }
}

void WorkerPool::work() {
  const size_t own_share =
      next_worker_share_.fetch_add(1, std::memory_order_relaxed);
  uint32_t seen_job = 0;
  bool spin = true;
  for (;;) {
    uint64_t state = wait_for_job(seen_job, spin);
    if (stopping_.load(std::memory_order_relaxed)) {
      return;
    }
    seen_job = job_number(state);
    bool joined = false;
    while ((state & kOpen) != 0 && job_number(state) == seen_job) {
      if (state_.compare_exchange_weak(state,
                                       state + 1,
                                       std::memory_order_acquire,
                                       std::memory_order_acquire)) {
        joined = true;
        break;
      }
    }
    if (!joined) {
      continue; // the caller finished it alone
    }
    spin = (flags_ & kYieldWorkers) == 0;
    {
      DenormalsScope denormals((flags_ & kDisableDenormals) != 0);
      run_chunks(own_share);
    }
    state_.fetch_sub(1, std::memory_order_release);
  }
}

uint64_t WorkerPool::wait_for_job(uint32_t seen_job, bool spin) {
  const auto is_new = [&](uint64_t state) {
    return job_number(state) != seen_job ||
           stopping_.load(std::memory_order_relaxed);
  };
  if (spin && spin_.count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + spin_;
    for (unsigned i = 1;; ++i) {
      const uint64_t state = state_.load(std::memory_order_acquire);
      if (is_new(state)) {
        return state;
      }
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) {
        break;
      }
      if (i % 512 == 0) {
        // Every ~10 us: on a busy machine this worker may share a core with
        // the caller (or any other thread), which then runs. On an idle
        // core this returns at once.
        std::this_thread::yield();
      }
      cpu_relax();
    }
  }
  std::unique_lock<std::mutex> lock(sleep_->mutex);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  uint64_t state = 0;
  sleep_->wake.wait(lock, [&] {
    state = state_.load(std::memory_order_seq_cst);
    return is_new(state);
  });
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return state;
}

} // namespace threadpool
} // namespace extension
} // namespace executorch
