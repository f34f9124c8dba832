#pragma once

// Logging. ET_LOG(Level, "fmt", args...) formats into a fixed stack buffer
// and hands the text to et_pal_emit_log_message. Defining ET_LOG_ENABLED=0
// (as size-optimized builds do) compiles every log statement out.

#include <cstdarg>
#include <cstddef>

#include <executorch/runtime/platform/platform.h>

#ifndef ET_LOG_ENABLED
#define ET_LOG_ENABLED 1
#endif

namespace executorch {
namespace runtime {

enum class LogLevel {
  Debug,
  Info,
  Error,
  Fatal,
};

// Formats and emits one message; used through the ET_LOG macro.
void vlogf(LogLevel level,
           const char* filename,
           const char* function,
           size_t line,
           const char* format,
           va_list args);

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
inline void
logf(LogLevel level,
     const char* filename,
     const char* function,
     size_t line,
     const char* format,
     ...) {
  va_list args;
  va_start(args, format);
  vlogf(level, filename, function, line, format, args);
  va_end(args);
}

} // namespace runtime
} // namespace executorch

#if ET_LOG_ENABLED
#define ET_LOG(level, format, ...)                                    \
  ::executorch::runtime::logf(::executorch::runtime::LogLevel::level, \
                              __FILE__,                               \
                              __func__,                               \
                              __LINE__,                               \
                              format,                                 \
                              ##__VA_ARGS__)
#else
#define ET_LOG(level, format, ...) ((void)0)
#endif
