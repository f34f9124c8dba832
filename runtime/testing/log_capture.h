#pragma once

// Test helper: records runtime log messages while a LogCapture is alive.
// log_capture.cpp defines a strong et_pal_emit_log_message for the test
// binary, which still prints every message to stderr.

#include <string>
#include <vector>

namespace executorch {
namespace runtime {
namespace testing {

class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  const std::vector<std::string>& messages() const {
    return messages_;
  }
  // True if any captured message contains every one of `parts`.
  bool contains(const std::vector<std::string>& parts) const;

  // Called by the PAL override.
  static void record(const char* message, size_t length);

 private:
  std::vector<std::string> messages_;
};

} // namespace testing
} // namespace runtime
} // namespace executorch
