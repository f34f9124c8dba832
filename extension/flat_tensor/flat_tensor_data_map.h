#pragma once

// FlatTensorDataMap: a NamedDataMap over a .ptd file (upstream ExecuTorch's
// flat tensor format; schema in serialize/flat_tensor.fbs). Programs
// exported with external constants, or with delegate weights tagged
// external, find their data here: pass the map to Program::load_method (the
// Module does, given data files).
//
// Ownership: the map keeps the file's flatbuffer in memory and reads the
// data through `loader`, which must outlive it. Buffers from get_data() own
// their memory (or mapping) and may outlive the map. Lookups are safe from
// several threads when the loader's loads are.

#include <cstddef>
#include <cstdint>

#include <executorch/extension/flat_tensor/serialize/flat_tensor_header.h>
#include <executorch/runtime/core/data_loader.h>
#include <executorch/runtime/core/named_data_map.h>

namespace flat_tensor_flatbuffer {
struct FlatTensor;
struct NamedData;
} // namespace flat_tensor_flatbuffer

namespace executorch {
namespace extension {

class FlatTensorDataMap final : public ::executorch::runtime::NamedDataMap {
 public:
  // Reads and checks the header and the flatbuffer: every entry's key,
  // segment and tensor layout are validated here, so lookups cannot read
  // out of range. Errors: NotFound when the file has no FH01 header;
  // InvalidExternalData naming the field that is wrong; NotSupported for a
  // newer format version; the loader's errors.
  ET_NODISCARD static ::executorch::runtime::Result<FlatTensorDataMap> load(
      ::executorch::runtime::DataLoader* loader);

  FlatTensorDataMap(FlatTensorDataMap&&) = default;
  FlatTensorDataMap(const FlatTensorDataMap&) = delete;
  FlatTensorDataMap& operator=(const FlatTensorDataMap&) = delete;
  FlatTensorDataMap& operator=(FlatTensorDataMap&&) = delete;

  // NotFound for an unknown key or one stored without a layout.
  ET_NODISCARD ::executorch::runtime::Result<
      const ::executorch::runtime::TensorLayout>
  get_tensor_layout(std::string_view key) const override;
  ET_NODISCARD ::executorch::runtime::Result<
      ::executorch::runtime::FreeableBuffer>
  get_data(std::string_view key) const override;
  ET_NODISCARD ::executorch::runtime::Error load_data_into(
      std::string_view key,
      void* buffer,
      size_t size) const override;
  ET_NODISCARD ::executorch::runtime::Result<uint32_t> get_num_keys()
      const override;
  ET_NODISCARD ::executorch::runtime::Result<const char*> get_key(
      uint32_t index) const override;

  // The newest format version this reader accepts.
  static constexpr uint32_t kMaxSupportedVersion = 0;

 private:
  FlatTensorDataMap(FlatTensorHeader header,
                    ::executorch::runtime::FreeableBuffer flatbuffer,
                    const flat_tensor_flatbuffer::FlatTensor* flat_tensor,
                    ::executorch::runtime::DataLoader* loader)
      : header_(header),
        flatbuffer_(std::move(flatbuffer)),
        flat_tensor_(flat_tensor),
        loader_(loader) {}

  // The entry of `key`, or NotFound.
  ::executorch::runtime::Result<const flat_tensor_flatbuffer::NamedData*> find(
      std::string_view key) const;
  // File offset and size of `entry`'s segment.
  void segment_range(const flat_tensor_flatbuffer::NamedData* entry,
                     size_t* offset,
                     size_t* size) const;

  FlatTensorHeader header_;
  ::executorch::runtime::FreeableBuffer flatbuffer_;
  const flat_tensor_flatbuffer::FlatTensor* flat_tensor_;
  ::executorch::runtime::DataLoader* loader_;
};

} // namespace extension
} // namespace executorch
