#pragma once

// NamedDataMap: read-only bytes looked up by a string key. Delegates find
// their weights in one (a program's named data, or an external .ptd file),
// and methods find external constant tensors in one.
//
// Implementations: executor/pte_data_map.h (a .pte's named data),
// extension/flat_tensor (a .ptd file), executor/merged_data_map.h (several
// maps as one). A map must outlive the buffers it hands out only if its
// implementation says so; the buffers themselves are released when freed.
// Maps are immutable after construction, and concurrent lookups are safe
// when the map's DataLoader allows concurrent loads.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <executorch/runtime/core/error.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/core/result.h>
#include <executorch/runtime/core/tensor_layout.h>

namespace executorch {
namespace runtime {

class NamedDataMap {
 public:
  virtual ~NamedDataMap() = default;

  // The layout stored with `key`'s data. Errors: NotFound for an unknown
  // key, or a key whose data is not a tensor.
  ET_NODISCARD virtual Result<const TensorLayout> get_tensor_layout(
      std::string_view key) const = 0;

  // The bytes of `key`. Errors: NotFound for an unknown key.
  ET_NODISCARD virtual Result<FreeableBuffer> get_data(
      std::string_view key) const = 0;

  // Copies the first `size` bytes of `key`'s data into `buffer`. Errors:
  // NotFound; InvalidArgument when the data is shorter than `size`.
  ET_NODISCARD virtual Error load_data_into(std::string_view key,
                                            void* buffer,
                                            size_t size) const = 0;

  ET_NODISCARD virtual Result<uint32_t> get_num_keys() const = 0;

  // Key `index` (< get_num_keys()); the pointer lives as long as the map.
  ET_NODISCARD virtual Result<const char*> get_key(uint32_t index) const = 0;
};

} // namespace runtime
} // namespace executorch

namespace torch {
namespace executor {
using ::executorch::runtime::NamedDataMap;
using ::executorch::runtime::TensorLayout;
} // namespace executor
} // namespace torch
