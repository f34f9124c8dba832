#pragma once

// Builds the ETDump FlatBuffer (size-prefixed, identifier "ED00") from the
// records ETDumpGen keeps.

#include <executorch/devtools/etdump/etdump_gen.h>
#include <executorch/devtools/etdump/event_log.h>

namespace executorch {
namespace etdump {
namespace internal {

// When `log` records into a caller's buffer, the ETDump is built in the
// buffer's unused part (which every record reserved room in) and the result
// points there; otherwise the result is heap memory released with free().
// {nullptr, 0} only if memory runs out.
ETDumpResult serialize_etdump(EventLog& log);

} // namespace internal
} // namespace etdump
} // namespace executorch
