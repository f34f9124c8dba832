#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>

#include <cstring>

#include <executorch/extension/flat_tensor/serialize/flat_tensor_generated.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {

using ::executorch::runtime::DataLoader;
using ::executorch::runtime::Error;
using ::executorch::runtime::FreeableBuffer;
using ::executorch::runtime::Result;
using ::executorch::runtime::Span;
using ::executorch::runtime::TensorLayout;

namespace {

const DataLoader::SegmentInfo kExternal(DataLoader::SegmentInfo::Type::External);

// The layout stored with `entry` (which must have one); its spans point into
// the flatbuffer.
Result<const TensorLayout> layout_of(
    const flat_tensor_flatbuffer::NamedData* entry) {
  const auto* layout = entry->tensor_layout();
  const auto* sizes = layout->sizes();
  const auto* dim_order = layout->dim_order();
  const size_t rank = sizes == nullptr ? 0 : sizes->size();
  const size_t order_rank = dim_order == nullptr ? 0 : dim_order->size();
  ET_CHECK_OR_RETURN_ERROR(rank == order_rank,
                           InvalidExternalData,
                           ".ptd key '%s': %zu sizes but %zu dim_order entries",
                           entry->key()->c_str(),
                           rank,
                           order_rank);
  return TensorLayout::create(
      Span<const int32_t>(rank == 0 ? nullptr : sizes->data(), rank),
      Span<const uint8_t>(rank == 0 ? nullptr : dim_order->data(), rank),
      static_cast<::executorch::aten::ScalarType>(layout->scalar_type()));
}

// Checks entry `index` of a verified flatbuffer against the segments and
// the header's segment data size.
Error check_entry(const flat_tensor_flatbuffer::FlatTensor* flat_tensor,
                  const FlatTensorHeader& header,
                  uint32_t index) {
  const auto* entry = flat_tensor->named_data()->Get(index);
  ET_CHECK_OR_RETURN_ERROR(entry->key() != nullptr,
                           InvalidExternalData,
                           ".ptd named_data[%u] has no key",
                           index);
  const auto* segments = flat_tensor->segments();
  const uint32_t num_segments = segments == nullptr ? 0 : segments->size();
  ET_CHECK_OR_RETURN_ERROR(entry->segment_index() < num_segments,
                           InvalidExternalData,
                           ".ptd named_data[%u] ('%s'): segment_index %u out "
                           "of range: %u segments",
                           index,
                           entry->key()->c_str(),
                           entry->segment_index(),
                           num_segments);
  const auto* segment = segments->Get(entry->segment_index());
  ET_CHECK_OR_RETURN_ERROR(
      segment->offset() <= header.segment_data_size &&
          segment->size() <= header.segment_data_size - segment->offset(),
      InvalidExternalData,
      ".ptd named_data[%u] ('%s'): segment %u (offset %llu, size %llu) ends "
      "past the %llu bytes of segment data",
      index,
      entry->key()->c_str(),
      entry->segment_index(),
      static_cast<unsigned long long>(segment->offset()),
      static_cast<unsigned long long>(segment->size()),
      static_cast<unsigned long long>(header.segment_data_size));
  if (entry->tensor_layout() != nullptr) {
    Result<const TensorLayout> layout = layout_of(entry);
    ET_CHECK_OR_RETURN_ERROR(layout.ok(),
                             InvalidExternalData,
                             ".ptd named_data[%u] ('%s'): invalid tensor "
                             "layout",
                             index,
                             entry->key()->c_str());
    ET_CHECK_OR_RETURN_ERROR(layout->nbytes() <= segment->size(),
                             InvalidExternalData,
                             ".ptd named_data[%u] ('%s'): the tensor needs "
                             "%zu bytes but its segment has %llu",
                             index,
                             entry->key()->c_str(),
                             layout->nbytes(),
                             static_cast<unsigned long long>(segment->size()));
  }
  return Error::Ok;
}

// The file's header; NotFound when the file is too short to have one.
Result<FlatTensorHeader> read_header(DataLoader* loader, size_t file_size) {
  if (file_size < FlatTensorHeader::kNumHeadBytes) {
    return Error::NotFound;
  }
  Result<FreeableBuffer> head =
      loader->load(0, FlatTensorHeader::kNumHeadBytes, kExternal);
  if (!head.ok()) {
    return head.error();
  }
  return FlatTensorHeader::Parse(head->data(), head->size());
}

} // namespace

Result<FlatTensorDataMap> FlatTensorDataMap::load(DataLoader* loader) {
  ET_CHECK_OR_RETURN_ERROR(
      loader != nullptr, InvalidArgument, "FlatTensorDataMap: null loader");
  Result<size_t> file_size = loader->size();
  if (!file_size.ok()) {
    return file_size.error();
  }
  Result<FlatTensorHeader> header = read_header(loader, *file_size);
  if (header.error() == Error::NotFound) {
    ET_LOG(Error,
           "Not a .ptd file: no FH01 header at byte %zu (%zu-byte file)",
           FlatTensorHeader::kHeaderOffset,
           *file_size);
    return Error::InvalidExternalData;
  }
  if (!header.ok()) {
    return header.error();
  }
  ET_CHECK_OR_RETURN_ERROR(
      header->segment_data_size == 0 ||
          (header->segment_base_offset <= *file_size &&
           header->segment_data_size <=
               *file_size - header->segment_base_offset),
      InvalidExternalData,
      ".ptd truncated: the header places %llu bytes of data at offset %llu "
      "but the file has %zu bytes",
      static_cast<unsigned long long>(header->segment_data_size),
      static_cast<unsigned long long>(header->segment_base_offset),
      *file_size);

  const size_t flatbuffer_size =
      header->flatbuffer_offset + header->flatbuffer_size;
  Result<FreeableBuffer> flatbuffer =
      loader->load(0, flatbuffer_size, kExternal);
  if (!flatbuffer.ok()) {
    return flatbuffer.error();
  }
  const void* data = flatbuffer->data();
  ET_CHECK_OR_RETURN_ERROR(
      reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) == 0,
      InvalidArgument,
      ".ptd data at %p is not aligned to %zu bytes",
      data,
      alignof(uint64_t));
  ET_CHECK_OR_RETURN_ERROR(
      flat_tensor_flatbuffer::FlatTensorBufferHasIdentifier(data),
      InvalidExternalData,
      "Not a .ptd file: file identifier '%.4s', expected '%s'",
      static_cast<const char*>(data) + 4,
      flat_tensor_flatbuffer::FlatTensorIdentifier());
  flatbuffers::Verifier verifier(static_cast<const uint8_t*>(data),
                                 flatbuffer_size);
  ET_CHECK_OR_RETURN_ERROR(
      flat_tensor_flatbuffer::VerifyFlatTensorBuffer(verifier),
      InvalidExternalData,
      ".ptd flatbuffer failed verification (%zu bytes): truncated or corrupt",
      flatbuffer_size);
  const auto* flat_tensor = flat_tensor_flatbuffer::GetFlatTensor(data);
  ET_CHECK_OR_RETURN_ERROR(flat_tensor->version() <= kMaxSupportedVersion,
                           NotSupported,
                           ".ptd format version %u is newer than this "
                           "runtime reads (%u)",
                           flat_tensor->version(),
                           kMaxSupportedVersion);
  ET_CHECK_OR_RETURN_ERROR(flat_tensor->named_data() != nullptr,
                           InvalidExternalData,
                           ".ptd has no named_data");
  for (uint32_t i = 0; i < flat_tensor->named_data()->size(); ++i) {
    const Error checked = check_entry(flat_tensor, *header, i);
    if (checked != Error::Ok) {
      return checked;
    }
  }
  return FlatTensorDataMap(
      *header, std::move(*flatbuffer), flat_tensor, loader);
}

Result<const flat_tensor_flatbuffer::NamedData*> FlatTensorDataMap::find(
    std::string_view key) const {
  const auto* named_data = flat_tensor_->named_data();
  for (uint32_t i = 0; i < named_data->size(); ++i) {
    const auto* entry = named_data->Get(i);
    if (std::string_view(entry->key()->c_str(), entry->key()->size()) == key) {
      return entry;
    }
  }
  return Error::NotFound;
}

void FlatTensorDataMap::segment_range(
    const flat_tensor_flatbuffer::NamedData* entry,
    size_t* offset,
    size_t* size) const {
  // check_entry proved the range lies inside the file.
  const auto* segment = flat_tensor_->segments()->Get(entry->segment_index());
  *offset = header_.segment_base_offset + segment->offset();
  *size = segment->size();
}

Result<const TensorLayout> FlatTensorDataMap::get_tensor_layout(
    std::string_view key) const {
  Result<const flat_tensor_flatbuffer::NamedData*> entry = find(key);
  if (!entry.ok()) {
    return entry.error();
  }
  if ((*entry)->tensor_layout() == nullptr) {
    return Error::NotFound;
  }
  return layout_of(*entry);
}

Result<FreeableBuffer> FlatTensorDataMap::get_data(std::string_view key) const {
  Result<const flat_tensor_flatbuffer::NamedData*> entry = find(key);
  if (!entry.ok()) {
    return entry.error();
  }
  size_t offset = 0, size = 0;
  segment_range(*entry, &offset, &size);
  return loader_->load(offset, size, kExternal);
}

Error FlatTensorDataMap::load_data_into(std::string_view key,
                                        void* buffer,
                                        size_t size) const {
  Result<const flat_tensor_flatbuffer::NamedData*> entry = find(key);
  if (!entry.ok()) {
    return entry.error();
  }
  size_t offset = 0, available = 0;
  segment_range(*entry, &offset, &available);
  ET_CHECK_OR_RETURN_ERROR(size <= available,
                           InvalidArgument,
                           ".ptd key '%.*s' has %zu bytes, %zu requested",
                           static_cast<int>(key.size()),
                           key.data(),
                           available,
                           size);
  return loader_->load_into(offset, size, kExternal, buffer);
}

Result<uint32_t> FlatTensorDataMap::get_num_keys() const {
  return flat_tensor_->named_data()->size();
}

Result<const char*> FlatTensorDataMap::get_key(uint32_t index) const {
  const uint32_t count = flat_tensor_->named_data()->size();
  ET_CHECK_OR_RETURN_ERROR(index < count,
                           InvalidArgument,
                           ".ptd key %u out of range: %u keys",
                           index,
                           count);
  return flat_tensor_->named_data()->Get(index)->key()->c_str();
}

} // namespace extension
} // namespace executorch
