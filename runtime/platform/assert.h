#pragma once

// Checks for conditions that can only fail through a bug in the runtime
// itself (never through bad input: bad input gets an Error instead).

#include <executorch/runtime/platform/abort.h>
#include <executorch/runtime/platform/log.h>

#define ET_CHECK_MSG(cond, format, ...)                                  \
  do {                                                                   \
    if (ET_UNLIKELY(!(cond))) {                                          \
      ET_LOG(Fatal, "Check failed (%s): " format, #cond, ##__VA_ARGS__); \
      ::executorch::runtime::runtime_abort();                            \
    }                                                                    \
  } while (0)

#define ET_CHECK(cond) ET_CHECK_MSG(cond, "%s", "")

#define ET_DCHECK_MSG(cond, format, ...) \
  ET_CHECK_MSG(cond, format, ##__VA_ARGS__)
#define ET_DCHECK(cond) ET_CHECK(cond)
