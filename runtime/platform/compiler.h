#pragma once

// Compiler portability macros used across the runtime.

#define ET_NODISCARD [[nodiscard]]
#define ET_UNUSED [[maybe_unused]]
#define ET_INLINE inline __attribute__((always_inline))
#define ET_NOINLINE __attribute__((noinline))
#define ET_NORETURN [[noreturn]]
#define ET_WEAK __attribute__((weak))
#define ET_LIKELY(x) __builtin_expect(!!(x), 1)
#define ET_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ET_FUNCTION __func__

// Namespace that runtime (as opposed to kernel) symbols live in; kept as a
// macro so that call sites written against ExecuTorch compile unchanged.
#define ET_RUNTIME_NAMESPACE runtime
