#include <executorch/extension/threadpool/threadpool.h>

#include <sched.h>

#include <algorithm>
#include <thread>

#include <pthreadpool.h>

#include <executorch/extension/threadpool/pthreadpool_api.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {
namespace threadpool {

namespace {

std::shared_ptr<pthreadpool> create_pool(size_t thread_count) {
  const size_t n = thread_count != 0 ? thread_count : cores_available();
  std::shared_ptr<pthreadpool> pool = make_pthreadpool(n);
  if (pool == nullptr) {
    ET_LOG(Error, "Could not create a thread pool of %zu threads", n);
  }
  return pool;
}

void run_one(void* context, size_t index) {
  (*static_cast<::executorch::runtime::FunctionRef<void(size_t)>*>(context))(
      index);
}

} // namespace

size_t cores_available() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(size_t thread_count)
    : pool_(create_pool(thread_count)) {}

size_t ThreadPool::get_thread_count() const {
  pthreadpool* pool = get_pthreadpool();
  return pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
}

bool ThreadPool::_unsafe_reset_threadpool(uint32_t num_threads) {
  // Asking for the count the pool has keeps it: users holding it (XNNPACK
  // runtimes) go on sharing it with the kernels instead of keeping an old
  // pool of their own.
  const size_t wanted = num_threads != 0 ? num_threads : cores_available();
  if (get_pthreadpool() != nullptr && get_thread_count() == wanted) {
    return true;
  }
  std::shared_ptr<pthreadpool> fresh = create_pool(num_threads);
  if (fresh == nullptr) {
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  pool_ = std::move(fresh);
  return true;
}

void ThreadPool::run(::executorch::runtime::FunctionRef<void(size_t)> fn,
                     size_t range) {
  // Holding a reference keeps the pool alive if another thread resets it
  // meanwhile. A pool that could not be created runs fn on this thread
  // (pthreadpool's functions accept a null pool).
  std::shared_ptr<pthreadpool> pool = share_pthreadpool();
  pthreadpool_parallelize_1d(pool.get(), run_one, &fn, range, /*flags=*/0);
}

pthreadpool* ThreadPool::get_pthreadpool() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pool_.get();
}

std::shared_ptr<pthreadpool> ThreadPool::share_pthreadpool() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pool_;
}

ThreadPool* get_threadpool() {
  // Never destroyed: worker threads must not be joined during static
  // destruction, when other static objects they might touch are gone.
  static ThreadPool* pool = new ThreadPool();
  return pool;
}

pthreadpool* get_pthreadpool() {
  return get_threadpool()->get_pthreadpool();
}

} // namespace threadpool
} // namespace extension
} // namespace executorch
