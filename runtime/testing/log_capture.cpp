#include <executorch/runtime/testing/log_capture.h>

#include <cstdio>

#include <executorch/runtime/platform/platform.h>

namespace executorch {
namespace runtime {
namespace testing {

namespace {
// Tests run on one thread; the capture in scope, if any.
LogCapture* active_capture = nullptr;
} // namespace

LogCapture::LogCapture() {
  active_capture = this;
}

LogCapture::~LogCapture() {
  active_capture = nullptr;
}

bool LogCapture::contains(const std::vector<std::string>& parts) const {
  for (const std::string& message : messages_) {
    bool all = true;
    for (const std::string& part : parts) {
      all = all && message.find(part) != std::string::npos;
    }
    if (all) {
      return true;
    }
  }
  return false;
}

void LogCapture::record(const char* message, size_t length) {
  if (active_capture != nullptr) {
    active_capture->messages_.emplace_back(message, length);
  }
}

} // namespace testing
} // namespace runtime
} // namespace executorch

extern "C" void et_pal_emit_log_message(et_timestamp_t timestamp,
                                        et_pal_log_level_t level,
                                        const char* filename,
                                        const char* function,
                                        size_t line,
                                        const char* message,
                                        size_t length) {
  (void)timestamp;
  (void)function;
  std::fprintf(stderr,
               "%c %s:%zu] %.*s\n",
               static_cast<char>(level),
               filename,
               line,
               static_cast<int>(length),
               message);
  executorch::runtime::testing::LogCapture::record(message, length);
}
