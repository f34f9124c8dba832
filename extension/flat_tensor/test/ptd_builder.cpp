#include <executorch/extension/flat_tensor/test/ptd_builder.h>

#include <cstring>

#include <executorch/extension/flat_tensor/serialize/flat_tensor_generated.h>

namespace executorch {
namespace extension {
namespace testing {

namespace {

constexpr size_t kSegmentAlignment = 128;
constexpr size_t kPaddedHeader = 48;

size_t align(size_t n, size_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

void put_le(std::vector<uint8_t>& out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    out.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
}

} // namespace

std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<uint8_t> build_ptd(const std::vector<PtdEntry>& entries,
                               uint32_t version) {
  namespace fb = flat_tensor_flatbuffer;
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::DataSegment>> segments;
  std::vector<flatbuffers::Offset<fb::NamedData>> named;
  std::vector<size_t> offsets;
  size_t end = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const size_t offset = align(end, kSegmentAlignment);
    offsets.push_back(offset);
    segments.push_back(
        fb::CreateDataSegment(b, offset, entries[i].data.size()));
    end = offset + entries[i].data.size();
    flatbuffers::Offset<fb::TensorLayout> layout;
    if (entries[i].float_sizes) {
      const auto& sizes = *entries[i].float_sizes;
      std::vector<uint8_t> order;
      for (size_t d = 0; d < sizes.size(); ++d) {
        order.push_back(static_cast<uint8_t>(d));
      }
      layout = fb::CreateTensorLayout(b,
                                      executorch_flatbuffer::ScalarType::FLOAT,
                                      b.CreateVector(sizes),
                                      b.CreateVector(order));
    }
    named.push_back(fb::CreateNamedData(
        b, b.CreateString(entries[i].key), static_cast<uint32_t>(i), layout));
  }
  b.Finish(fb::CreateFlatTensor(
               b, version, b.CreateVector(segments), b.CreateVector(named)),
           fb::FlatTensorIdentifier());
  const uint8_t* flatbuffer = b.GetBufferPointer();
  const size_t flatbuffer_size = b.GetSize();
  const size_t base = align(flatbuffer_size + kPaddedHeader, kSegmentAlignment);

  std::vector<uint8_t> out;
  uint32_t root = 0;
  std::memcpy(&root, flatbuffer, sizeof(root));
  put_le(out, root + kPaddedHeader, 4);
  out.insert(out.end(), flatbuffer + 4, flatbuffer + 8);
  out.insert(out.end(), {'F', 'H', '0', '1'});
  put_le(out, 40, 4);
  put_le(out, kPaddedHeader, 8);
  put_le(out, flatbuffer_size, 8);
  put_le(out, base, 8);
  put_le(out, end, 8);
  out.resize(8 + kPaddedHeader, 0);
  out.insert(out.end(), flatbuffer + 8, flatbuffer + flatbuffer_size);
  out.resize(base, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    out.resize(base + offsets[i], 0);
    out.insert(out.end(), entries[i].data.begin(), entries[i].data.end());
  }
  return out;
}

} // namespace testing
} // namespace extension
} // namespace executorch
