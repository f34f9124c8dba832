#pragma once

// Small helpers that interpret flatbuffer schema fields for the executor.

#include <cstddef>
#include <cstdint>

#include <executorch/runtime/core/portable_type/scalar_type.h>
#include <executorch/runtime/core/tag.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {
namespace internal {

// True when `raw` names a ScalarType this runtime can hold in a tensor.
bool is_valid_scalar_type(int8_t raw);

// The EValue tag a serialized value of type `type` becomes; Tag::None for
// Null and for types the runtime does not know.
Tag tag_for_value_type(executorch_flatbuffer::KernelTypes type);

// The largest rank a tensor may have (upstream ExecuTorch's limit).
constexpr size_t kMaxTensorRank = 16;

// Bytes of a dense tensor of `type` with `rank` non-negative `sizes`; false
// when the count overflows size_t.
bool checked_nbytes(const int32_t* sizes,
                    size_t rank,
                    etensor::ScalarType type,
                    size_t* nbytes);

// True when `index` is a valid index into a flatbuffer vector of `size`.
inline bool index_in_range(int64_t index, uint64_t size) {
  return index >= 0 && static_cast<uint64_t>(index) < size;
}

} // namespace internal
} // namespace runtime
} // namespace executorch
