// Runtime log capture and exception text (errors.h).
#include <executorch/extension/pybindings/errors.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include <executorch/runtime/platform/platform.h>

namespace executorch::extension::pybindings {

std::string ErrorLogCapture::joined() const {
  std::string text;
  for (const std::string& line : lines_) {
    text += text.empty() ? "" : "; ";
    text += line;
  }
  return text;
}

thread_local ErrorLogCapture* ErrorLogCapture::active_ = nullptr;
std::string valid_utf8(const std::string& bytes) {
  std::string text;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto byte = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
    const uint8_t lead = byte(i);
    size_t length = lead < 0x80                    ? 1
                    : lead >= 0xC2 && lead <= 0xDF ? 2
                    : lead >= 0xE0 && lead <= 0xEF ? 3
                    : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                   : 0;
    // The second byte's range excludes overlong forms, surrogates and code
    // points past U+10FFFF.
    const uint8_t low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    const uint8_t high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    for (size_t k = 1; k < length; ++k) {
      const bool in_range = i + k < bytes.size() &&
                            byte(i + k) >= (k == 1 ? low : 0x80) &&
                            byte(i + k) <= (k == 1 ? high : 0xBF);
      if (!in_range) {
        length = 0;
        break;
      }
    }
    if (length == 0) {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", lead);
      text += escaped;
      ++i;
    } else {
      text.append(bytes, i, length);
      i += length;
    }
  }
  return text;
}
[[noreturn]] void raise_error(const std::string& what,
                              Error error,
                              const ErrorLogCapture& logs) {
  char code[32];
  std::snprintf(code,
                sizeof(code),
                " (0x%x)",
                static_cast<unsigned>(static_cast<uint32_t>(error)));
  std::string message =
      what + ": " + ::executorch::runtime::to_string(error) + code;
  const std::string logged = logs.joined();
  if (!logged.empty()) {
    message += ": " + logged;
  }
  throw std::runtime_error(valid_utf8(message));
}

void check_ok(Error error,
              const std::string& what,
              const ErrorLogCapture& logs) {
  if (error != Error::Ok) {
    raise_error(what, error, logs);
  }
}

std::string quoted(const std::string& name) {
  return "'" + name + "'";
}
} // namespace executorch::extension::pybindings

using ::executorch::extension::pybindings::ErrorLogCapture;

// PAL would print them; inside one they become part of the exception.
extern "C" void et_pal_emit_log_message(et_timestamp_t timestamp,
                                        et_pal_log_level_t level,
                                        const char* filename,
                                        const char* function,
                                        size_t line,
                                        const char* message,
                                        size_t length) {
  (void)timestamp;
  (void)function;
  if ((level == kError || level == kFatal) &&
      ErrorLogCapture::record(message, length)) {
    return;
  }
  std::fprintf(stderr,
               "%c executorch:%s:%zu] %.*s\n",
               static_cast<char>(level),
               filename,
               line,
               static_cast<int>(length),
               message);
}
