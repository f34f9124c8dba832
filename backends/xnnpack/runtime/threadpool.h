#pragma once

// pthreadpools shared across the process. With extension_threadpool built,
// a delegate that asks for the process default, or for as many threads as
// the process-wide pool has, gets that pool itself
// (executorch::extension::threadpool::get_threadpool()), the one the
// optimized kernels run on: a program never runs two pools fighting over
// the same cores. Other counts (and set_default_num_threads) get a pool of
// their own, shared by delegates that ask for the same count, which lives
// while any of them does. A pool is fixed at delegate init (XNNPACK runtimes
// keep the pointer), so a later reset affects delegates initialized
// afterwards.

#include <cstddef>
#include <memory>

struct pthreadpool;

namespace executorch {
namespace backends {
namespace xnnpack {

using Threadpool = std::shared_ptr<pthreadpool>;

// A pool of `num_threads` threads (0: the process default). Null (XNNPACK
// runs on the calling thread, with an error logged once) if XNNPACK's
// pthreadpool calls do not reach extension_threadpool's implementation of
// pthreadpool, which the pool belongs to. Thread-safe.
Threadpool acquire_threadpool(size_t num_threads);

// The process default for acquire_threadpool(0); 0 restores the number of
// available cores. Thread-safe.
void set_default_num_threads(size_t num_threads);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
