#pragma once

// The host kernels' vector loops (simd/f32_dwconv_rows.cpp,
// simd/f32_pointwise_rows.cpp), compiled once per instruction set with the
// optimized kernels (executorch_simd_objects), by instruction set.

#include <cstddef>

#include <executorch/backends/xnnpack/runtime/simd/f32_dwconv_rows.h>
#include <executorch/backends/xnnpack/runtime/simd/f32_pointwise_rows.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using kernels::optimized::Isa;

struct HostLoops {
  f32_dw::RowFunction dw_row = nullptr;
  f32_pw::PointwiseFunction pointwise = nullptr;
  // The pointwise loop's block of output channels: two vectors.
  size_t pointwise_block = 0;
};

// The loops built for `isa`; all null when this build has none (whether
// this CPU runs them is kernels::optimized::isa_available's to say).
HostLoops host_loops(Isa isa);

} // namespace xnnpack
} // namespace backends
} // namespace executorch
