#pragma once

// Helpers for the pool's tests only.
// Meeting: lets a test prove that several threads run at once. Each caller
// of arrive() blocks until `expected` callers are inside at once, or the
// timeout passes; it returns whether they met.
// in_forked_child: runs a check in a forked child process.

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

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

// Calls check() in a child forked from this process; succeeds if it returns
// true within 20 s (a child that hangs is killed by SIGALRM).
template <typename Check>
::testing::AssertionResult in_forked_child(Check check) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    _exit(check() ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    return ::testing::AssertionFailure() << "fork or waitpid failed";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return ::testing::AssertionSuccess();
  }
  if (WIFSIGNALED(status)) {
    return ::testing::AssertionFailure()
           << "child killed by signal " << WTERMSIG(status)
           << (WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
  }
  return ::testing::AssertionFailure()
         << "child check failed (exit status " << WEXITSTATUS(status) << ")";
}

} // namespace testing
} // namespace threadpool
} // namespace extension
} // namespace executorch
