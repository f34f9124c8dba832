#pragma once

#include <cstdint>

namespace executorch {
namespace runtime {

// How a tensor's shape may change at run time. Values match the schema.
enum class TensorShapeDynamism : uint8_t {
  // Sizes never change.
  STATIC = 0,
  // Sizes may shrink below the planned upper bound, never grow past it.
  DYNAMIC_BOUND = 1,
  // Sizes may take any value; memory is not planned ahead of time.
  DYNAMIC_UNBOUND = 2,
};

} // namespace runtime
} // namespace executorch
