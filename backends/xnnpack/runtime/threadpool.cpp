#include <executorch/backends/xnnpack/runtime/threadpool.h>

#include <map>
#include <mutex>
#include <thread>

#include <pthreadpool.h>

#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/threadpool.h>
#endif

namespace executorch {
namespace backends {
namespace xnnpack {

namespace {

struct Pools {
  std::mutex mutex;
  size_t default_threads = 0;
  std::map<size_t, std::weak_ptr<pthreadpool>> by_count;
};

Pools& pools() {
  static Pools instance;
  return instance;
}

} // namespace

Threadpool acquire_threadpool(size_t num_threads) {
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mutex);
  size_t n = num_threads != 0 ? num_threads : p.default_threads;
#ifdef ET_USE_THREADPOOL
  auto* shared = ::executorch::extension::threadpool::get_threadpool();
  if (n == 0 || n == shared->get_thread_count()) {
    Threadpool pool = shared->share_pthreadpool();
    if (pool != nullptr) {
      return pool;
    }
  }
#endif
  if (n == 0) {
    n = std::max<size_t>(1, std::thread::hardware_concurrency());
  }
  Threadpool pool = p.by_count[n].lock();
  if (pool == nullptr) {
    pool = Threadpool(pthreadpool_create(n), pthreadpool_destroy);
    p.by_count[n] = pool;
  }
  return pool;
}

void set_default_num_threads(size_t num_threads) {
  Pools& p = pools();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.default_threads = num_threads;
}

} // namespace xnnpack
} // namespace backends
} // namespace executorch
