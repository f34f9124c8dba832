// Compiled into every target that links executorch::xnnpack_backend from the
// installed package: registers the XNNPACK delegate before main(), so that a
// static link needs no --whole-archive to keep it.

#include <executorch/backends/xnnpack/runtime/register_xnnpack_backend.h>
#include <executorch/runtime/platform/log.h>

namespace {

bool register_xnnpack_at_startup() {
  const bool ok = ::executorch::backends::xnnpack::register_xnnpack_backend() ==
                  ::executorch::runtime::Error::Ok;
  if (!ok) {
    ET_LOG(Error, "xnnpack_backend: registering the backend failed");
  }
  return ok;
}

const bool kXnnpackRegistered = register_xnnpack_at_startup();

} // namespace
