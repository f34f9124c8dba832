// Compiled into every target that links executorch::portable_ops_lib from
// the installed package: registers the portable kernels and the prim ops
// before main(). Being part of the app's own sources, it cannot be dropped
// by a static link, so no --whole-archive is needed.

#include <executorch/kernels/portable/register_portable_kernels.h>
#include <executorch/kernels/prim_ops/register_prim_ops.h>
#include <executorch/runtime/platform/log.h>

namespace {

bool register_portable_ops_at_startup() {
  const bool ok = ::executorch::kernels::register_portable_kernels() ==
                      ::executorch::runtime::Error::Ok &&
                  ::executorch::kernels::register_prim_ops() ==
                      ::executorch::runtime::Error::Ok;
  if (!ok) {
    ET_LOG(Error, "portable_ops_lib: registering the kernels failed");
  }
  return ok;
}

const bool kPortableOpsRegistered = register_portable_ops_at_startup();

} // namespace
