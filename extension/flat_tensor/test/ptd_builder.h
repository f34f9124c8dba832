#pragma once

// Test helper: writes .ptd bytes laid out as upstream's serializer lays them
// out (flatbuffer, the FH01 header spliced in at byte 8 and padded to 16
// bytes, then segments at 128-byte alignment). Tests start from valid
// entries and change one thing to make a malformed file.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/portable_type/scalar_type.h>

namespace executorch {
namespace extension {
namespace testing {

struct PtdEntry {
  std::string key;
  std::vector<uint8_t> data;
  // A contiguous float tensor of these sizes; none: raw bytes.
  std::optional<std::vector<int32_t>> float_sizes;
};

std::vector<uint8_t> build_ptd(const std::vector<PtdEntry>& entries,
                               uint32_t version = 0);

// The bytes of `values`.
std::vector<uint8_t> float_bytes(const std::vector<float>& values);

} // namespace testing
} // namespace extension
} // namespace executorch
