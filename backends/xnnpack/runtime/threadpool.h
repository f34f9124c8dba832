#pragma once

// pthreadpools shared across the process: delegates that ask for the same
// thread count share one pool, which lives while any of them does. A pool is
// fixed at its creation (XNNPACK runtimes keep the pointer), so changing the
// default affects delegates initialized afterwards.

#include <cstddef>
#include <memory>

struct pthreadpool;

namespace executorch {
namespace backends {
namespace xnnpack {

using Threadpool = std::shared_ptr<pthreadpool>;

// A pool of `num_threads` threads (0: the process default). Thread-safe.
Threadpool acquire_threadpool(size_t num_threads);

// The process default for acquire_threadpool(0); 0 restores the number of
// available cores. Thread-safe.
void set_default_num_threads(size_t num_threads);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
