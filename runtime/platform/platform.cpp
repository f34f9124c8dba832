// Weak default implementations of the PAL for hosted (POSIX) platforms, plus
// the small runtime helpers built on the PAL.

#include <executorch/runtime/platform/abort.h>
#include <executorch/runtime/platform/log.h>
#include <executorch/runtime/platform/platform.h>
#include <executorch/runtime/platform/runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

extern "C" {

__attribute__((weak)) void et_pal_init(void) {}

__attribute__((weak)) void et_pal_abort(void) {
  std::abort();
}

__attribute__((weak)) et_timestamp_t et_pal_current_ticks(void) {
  return static_cast<et_timestamp_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

__attribute__((weak)) et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {
  return {1, 1};
}

__attribute__((weak)) void et_pal_emit_log_message(et_timestamp_t timestamp,
                                                   et_pal_log_level_t level,
                                                   const char* filename,
                                                   const char* function,
                                                   size_t line,
                                                   const char* message,
                                                   size_t length) {
  (void)function;
  std::fprintf(
      stderr,
      "%c %llu.%06llu executorch:%s:%zu] %.*s\n",
      static_cast<char>(level),
      static_cast<unsigned long long>(timestamp / 1000000000ULL),
      static_cast<unsigned long long>((timestamp / 1000ULL) % 1000000ULL),
      filename,
      line,
      static_cast<int>(length),
      message);
}

__attribute__((weak)) void* et_pal_allocate(size_t size) {
  return std::malloc(size);
}

__attribute__((weak)) void et_pal_free(void* ptr) {
  std::free(ptr);
}

} // extern "C"

namespace executorch {
namespace runtime {

namespace {
bool pal_initialized = false;

et_pal_log_level_t to_pal_level(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return kDebug;
    case LogLevel::Info:
      return kInfo;
    case LogLevel::Error:
      return kError;
    case LogLevel::Fatal:
      return kFatal;
  }
  return kUnknown;
}

// Strips the directory so log lines stay short.
const char* base_name(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/') {
      base = p + 1;
    }
  }
  return base;
}
} // namespace

void runtime_init() {
  if (!pal_initialized) {
    et_pal_init();
    pal_initialized = true;
  }
}

void runtime_abort() {
  et_pal_abort();
}

void vlogf(LogLevel level,
           const char* filename,
           const char* function,
           size_t line,
           const char* format,
           va_list args) {
  char buffer[256];
  int length = std::vsnprintf(buffer, sizeof(buffer), format, args);
  if (length < 0) {
    return;
  }
  size_t size = static_cast<size_t>(length) < sizeof(buffer)
                    ? static_cast<size_t>(length)
                    : sizeof(buffer) - 1;
  et_timestamp_t ticks = et_pal_current_ticks();
  et_tick_ratio_t ratio = et_pal_ticks_to_ns_multiplier();
  et_timestamp_t ns = ticks * ratio.numerator / ratio.denominator;
  et_pal_emit_log_message(ns,
                          to_pal_level(level),
                          base_name(filename),
                          function,
                          line,
                          buffer,
                          size);
}

} // namespace runtime
} // namespace executorch
