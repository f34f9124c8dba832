#pragma once

// Registration of the XNNPACK delegate backend. Applications call
// register_xnnpack_backend() once before loading programs whose delegates
// use "XnnpackBackend" (explicit, so static linking cannot drop it).

#include <cstddef>

#include <executorch/runtime/core/error.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// The backend id in .pte delegates.
inline constexpr const char kXnnpackBackendId[] = "XnnpackBackend";

// Registers the backend under kXnnpackBackendId. Calling it again is
// harmless and returns Ok; it fails only when the registry is full.
runtime::Error register_xnnpack_backend();

// Threads used by delegates initialized afterwards unless their compile
// specs say otherwise ("num_threads"); 0 restores the default, the number of
// available cores. Delegates already initialized keep their threads.
void set_num_threads(size_t num_threads);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
