#pragma once

// The platform abstraction layer (PAL). These are the only functions through
// which the runtime reaches the platform. Each has a weak default (see
// platform.cpp); an application overrides one by defining a strong symbol of
// the same name.

#include <cstddef>
#include <cstdint>

extern "C" {

// Time since an arbitrary epoch, in ticks; convert with et_pal_ticks_to_ns.
typedef uint64_t et_timestamp_t;

typedef struct {
  uint64_t numerator;
  uint64_t denominator;
} et_tick_ratio_t;

typedef enum {
  kDebug = 'D',
  kInfo = 'I',
  kError = 'E',
  kFatal = 'F',
  kUnknown = '?',
} et_pal_log_level_t;

// Called once by runtime_init() before anything else in the PAL.
void et_pal_init(void);

// Stops the program immediately; never returns.
[[noreturn]] void et_pal_abort(void);

et_timestamp_t et_pal_current_ticks(void);
et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void);

// Emits one log message. `message` has `length` bytes and no trailing newline.
void et_pal_emit_log_message(et_timestamp_t timestamp,
                             et_pal_log_level_t level,
                             const char* filename,
                             const char* function,
                             size_t line,
                             const char* message,
                             size_t length);

// Heap access for the few extensions that want it (never the core runtime).
void* et_pal_allocate(size_t size);
void et_pal_free(void* ptr);

} // extern "C"
