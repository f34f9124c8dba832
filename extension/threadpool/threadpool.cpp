#include <executorch/extension/threadpool/threadpool.h>

#include <pthread.h>

#include <algorithm>

#include <pthreadpool.h>

#include <executorch/extension/threadpool/cpuinfo_utils.h>
#include <executorch/extension/threadpool/pthreadpool_api.h>
#include <executorch/extension/threadpool/worker_pool.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {
namespace threadpool {

namespace {

size_t resolve(size_t thread_count) {
  return thread_count != 0 ? thread_count : cpuinfo::get_num_performant_cores();
}

std::shared_ptr<pthreadpool> create_pool(size_t threads) {
  std::shared_ptr<pthreadpool> pool = make_pthreadpool(threads);
  if (pool == nullptr) {
    ET_LOG(Error, "Could not create a thread pool of %zu threads", threads);
  }
  return pool;
}

void run_one(void* context, size_t index) {
  (*static_cast<::executorch::runtime::FunctionRef<void(size_t)>*>(context))(
      index);
}

} // namespace

size_t cores_available() {
  return std::max<size_t>(1, cpuinfo::allowed_cpus().size());
}

ThreadPool::ThreadPool(size_t thread_count) {
  const size_t threads = resolve(thread_count);
  set_pool(create_pool(threads), threads);
}

void ThreadPool::set_pool(std::shared_ptr<pthreadpool> pool,
                          size_t threads) const {
  pool_ = std::move(pool);
  pool_threads_ = threads;
  pool_generation_ = fork_generation();
}

const std::shared_ptr<pthreadpool>& ThreadPool::current() const {
  if (pool_generation_ != fork_generation()) {
    // The parent's pool: its workers were not copied into this process. A
    // destroyed pool stays destroyed.
    set_pool(pool_ != nullptr ? create_pool(pool_threads_) : nullptr,
             pool_threads_);
  }
  return pool_;
}

size_t ThreadPool::get_thread_count() const {
  pthreadpool* pool = get_pthreadpool();
  return pool != nullptr ? pthreadpool_get_threads_count(pool) : 1;
}

bool ThreadPool::_unsafe_reset_threadpool(uint32_t num_threads) {
  // Asking for the count the pool has keeps it: users holding it (XNNPACK
  // runtimes) go on sharing it with the kernels instead of keeping an old
  // pool of their own.
  const size_t wanted = resolve(num_threads);
  if (get_pthreadpool() != nullptr && get_thread_count() == wanted) {
    return true;
  }
  std::shared_ptr<pthreadpool> fresh = create_pool(wanted);
  if (fresh == nullptr) {
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  set_pool(std::move(fresh), wanted);
  return true;
}

void ThreadPool::_unsafe_destroy_threadpool() {
  std::lock_guard<std::mutex> lock(mutex_);
  set_pool(nullptr, 1);
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
  return current().get();
}

std::shared_ptr<pthreadpool> ThreadPool::share_pthreadpool() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current();
}

ThreadPool* get_threadpool() {
  // Never destroyed: worker threads must not be joined during static
  // destruction, when other static objects they might touch are gone.
  static ThreadPool* pool = [] {
    auto* created = new ThreadPool();
    // The forking thread holds the mutex across fork(), so that the child's
    // copy is not left locked by a thread the child does not have.
    pthread_atfork([] { get_threadpool()->mutex_.lock(); },
                   [] { get_threadpool()->mutex_.unlock(); },
                   [] { get_threadpool()->mutex_.unlock(); });
    return created;
  }();
  return pool;
}

pthreadpool* get_pthreadpool() {
  return get_threadpool()->get_pthreadpool();
}

} // namespace threadpool
} // namespace extension
} // namespace executorch
