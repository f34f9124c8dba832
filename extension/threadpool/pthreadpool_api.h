#pragma once

// This library's implementation of pthreadpool's C API
// (pthreadpool_api.cpp): make_pthreadpool, and PthreadpoolProbe.
//
// PthreadpoolProbe tells whether a library's pthreadpool calls reach this
// library's pthreadpool implementation (pthreadpool_api.cpp) or another
// one, such as Debian's libpthreadpool that libXNNPACK.so links. A pool of
// this library handed to another implementation would be misread, so a
// user that cannot be sure checks first: pass get() where the library takes
// a pthreadpool_t, make it run some parallel work, then ask
// reached_this_library(). Any implementation treats the probe as a pool of
// no threads and runs the work on the calling thread.
//
// Ownership: the probe owns its block. Threads: one thread at a time.
// Tests: threadpool_test.cpp, and for XNNPACK
// backends/xnnpack/runtime/threadpool.cpp's check.

#include <cstddef>
#include <memory>

struct pthreadpool;

namespace executorch {
namespace extension {
namespace threadpool {

struct ProbeBlock;

// A pool of `threads` threads counting the caller (0: cores_available())
// for pthreadpool's API; null if its threads cannot be started. Calling
// this (not pthreadpool_create) makes sure the implementation is linked.
std::shared_ptr<pthreadpool> make_pthreadpool(size_t threads);

class PthreadpoolProbe final {
 public:
  PthreadpoolProbe();
  ~PthreadpoolProbe();
  PthreadpoolProbe(const PthreadpoolProbe&) = delete;
  PthreadpoolProbe& operator=(const PthreadpoolProbe&) = delete;

  pthreadpool* get() const;
  // Whether this library's implementation received get() since creation.
  bool reached_this_library() const;

 private:
  std::unique_ptr<ProbeBlock> block_;
};

} // namespace threadpool
} // namespace extension
} // namespace executorch
