#pragma once

// A small printf-style formatter for bare-metal builds. Newlib's printf
// engine costs tens of KB of flash; this one is a few KB and needs no heap,
// no locale and no file layer. libc_overrides.cpp routes snprintf and
// vsnprintf to it, so the runtime's log formatting uses it unchanged.
//
// Supported: flags "-+ #0", width and precision (numbers or '*'), length
// modifiers hh h l ll z j t, conversions d i u o x X c s p % and f F e E g G.
// Floating-point digits are correctly rounded (ties to even) for every float
// value and for doubles up to 15 significant digits; past that the last
// digits may differ from glibc's.
//
// Same contract as vsnprintf: writes at most `size` bytes including the
// terminating NUL and returns the length the full output would have had.
// Thread-safe (no state).

#include <cstdarg>
#include <cstddef>

extern "C" {

int et_vsnprintf(char* buffer, size_t size, const char* format, va_list args);

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int et_snprintf(char* buffer, size_t size, const char* format, ...);

} // extern "C"
