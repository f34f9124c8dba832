#pragma once

// NoThreadPoolGuard: while one is alive on a thread, parallel_for calls made
// on that thread run everything on it (upstream's name). Guards nest.

namespace executorch {
namespace extension {
namespace threadpool {

class NoThreadPoolGuard final {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);

  NoThreadPoolGuard() : previous_(is_enabled()) {
    set_enabled(true);
  }
  ~NoThreadPoolGuard() {
    set_enabled(previous_);
  }
  NoThreadPoolGuard(const NoThreadPoolGuard&) = delete;
  NoThreadPoolGuard& operator=(const NoThreadPoolGuard&) = delete;

 private:
  const bool previous_;
};

} // namespace threadpool
} // namespace extension
} // namespace executorch

// Upstream's deprecated spelling, still used by older clients.
namespace torch {
namespace executorch {
namespace threadpool {
using ::executorch::extension::threadpool::NoThreadPoolGuard;
} // namespace threadpool
} // namespace executorch
} // namespace torch
