// Errors of the Python bindings: runtime log capture and exception text.
//
// A failing runtime call raises a Python exception (std::runtime_error or
// std::invalid_argument, which pybind11 translates) whose text names the
// operation, the runtime Error code and the Error/Fatal lines the runtime
// logged on this thread while failing. ErrorLogCapture collects those lines
// (the PAL log hook, et_pal_emit_log_message in errors.cpp, hands them to it).
//
// Ownership and threading: an ErrorLogCapture lives on the stack of the call
// it covers and sees only the lines logged by its own thread; captures nest.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/result.h>

namespace executorch::extension::pybindings {

using ::executorch::runtime::Error;
using ::executorch::runtime::Result;

// While alive, collects the Error and Fatal lines the runtime logs on this
// thread instead of printing them, so the exception raised for a failed call
// can carry them. Nests: an inner capture hides lines from the outer one.
class ErrorLogCapture {
 public:
  ErrorLogCapture() : outer_(active_) {
    active_ = this;
  }
  ~ErrorLogCapture() {
    active_ = outer_;
  }
  ErrorLogCapture(const ErrorLogCapture&) = delete;
  ErrorLogCapture& operator=(const ErrorLogCapture&) = delete;

  // Records the line if a capture is active; false if none is.
  static bool record(const char* message, size_t length) {
    if (active_ == nullptr) {
      return false;
    }
    active_->lines_.emplace_back(message, length);
    return true;
  }

  std::string joined() const;

 private:
  static thread_local ErrorLogCapture* active_;
  ErrorLogCapture* outer_;
  std::vector<std::string> lines_;
};

// Text from a program (names, strings, log lines that quote them) may be
// any bytes; Python strings must be UTF-8. Valid UTF-8 sequences are kept,
// every other byte becomes "\xNN".
std::string valid_utf8(const std::string& bytes);

// Raises RuntimeError: "<what>: <ErrorName> (0x..): <logged lines>".
[[noreturn]] void raise_error(const std::string& what,
                              Error error,
                              const ErrorLogCapture& logs);

// Raises as raise_error unless `error` is Ok.
void check_ok(Error error,
              const std::string& what,
              const ErrorLogCapture& logs);

// The value of `result`, or raises as raise_error.
template <typename T>
T unwrap(Result<T>&& result,
         const std::string& what,
         const ErrorLogCapture& logs) {
  if (!result.ok()) {
    raise_error(what, result.error(), logs);
  }
  return std::move(*result);
}

// "'name'", for messages.
std::string quoted(const std::string& name);

} // namespace executorch::extension::pybindings
