#pragma once

// Meeting: lets a test prove that several threads run at once. Each caller
// of arrive() blocks until `expected` callers are inside at once, or the
// timeout passes; it returns whether they met. For the pool's tests only.

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace executorch {
namespace extension {
namespace threadpool {
namespace testing {

class Meeting {
 public:
  explicit Meeting(int expected) : expected_(expected) {}
  bool arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++arrived_;
    cv_.notify_all();
    return cv_.wait_for(
        lock, std::chrono::seconds(20), [&] { return arrived_ >= expected_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int expected_;
  int arrived_ = 0;
};

} // namespace testing
} // namespace threadpool
} // namespace extension
} // namespace executorch
