#include <executorch/backends/xnnpack/runtime/threadpool.h>

#include <map>
#include <mutex>
#include <thread>

#include <pthreadpool.h>
#include <xnnpack.h>

#include <executorch/backends/xnnpack/runtime/huge_page_allocator.h>
#include <executorch/runtime/platform/log.h>

#ifdef ET_USE_THREADPOOL
#include <executorch/extension/threadpool/pthreadpool_api.h>
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

#ifdef ET_USE_THREADPOOL
// Whether libXNNPACK's pthreadpool calls reach extension_threadpool's
// implementation, which they do unless another pthreadpool came first in
// the dynamic linker's search (e.g. another library loaded libXNNPACK
// before this one). XNNPACK must never get a pool of ours otherwise: it
// would hand it to that other implementation.
bool xnnpack_reaches_our_pools() {
  static const bool reached = [] {
    ::executorch::extension::threadpool::PthreadpoolProbe probe;
    float in[2] = {0.f, 0.f};
    float out[2];
    xnn_operator_t clamp = nullptr;
    bool ran = initialize_xnnpack() == xnn_status_success &&
               xnn_create_clamp_nc_f32(1, 1, 1, -1.f, 1.f, 0, &clamp) ==
                   xnn_status_success &&
               xnn_setup_clamp_nc_f32(clamp, 2, in, out, probe.get()) ==
                   xnn_status_success &&
               xnn_run_operator(clamp, probe.get()) == xnn_status_success;
    if (clamp != nullptr) {
      xnn_delete_operator(clamp);
    }
    if (ran && !probe.reached_this_library()) {
      ET_LOG(Error,
             "XNNPACK's pthreadpool calls go to another pthreadpool library "
             "than this program's: XNNPACK delegates run single-threaded");
    }
    return ran && probe.reached_this_library();
  }();
  return reached;
}
#endif

} // namespace

Threadpool acquire_threadpool(size_t num_threads) {
#ifdef ET_USE_THREADPOOL
  if (!xnnpack_reaches_our_pools()) {
    return nullptr;
  }
#endif
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
#ifdef ET_USE_THREADPOOL
    pool = ::executorch::extension::threadpool::make_pthreadpool(n);
#else
    pool = Threadpool(pthreadpool_create(n), pthreadpool_destroy);
#endif
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
