#include <executorch/runtime/executor/pte_data_map.h>

#include <cstring>

#include <executorch/runtime/platform/log.h>
#include <executorch/schema/program_generated.h>

namespace executorch {
namespace runtime {

Result<PteDataMap> PteDataMap::create(
    DataLoader* loader,
    size_t segment_base_offset,
    const executorch_flatbuffer::Program* program) {
  const auto* named_data = program->named_data();
  const auto* segments = program->segments();
  const uint32_t num_segments = segments == nullptr ? 0 : segments->size();
  for (uint32_t i = 0; named_data != nullptr && i < named_data->size(); ++i) {
    const auto* entry = named_data->Get(i);
    ET_CHECK_OR_RETURN_ERROR(entry->key() != nullptr,
                             InvalidProgram,
                             "named_data[%u] has no key",
                             i);
    ET_CHECK_OR_RETURN_ERROR(entry->segment_index() < num_segments,
                             InvalidProgram,
                             "named_data[%u] ('%s'): segment_index %u out of "
                             "range: %u segments",
                             i,
                             entry->key()->c_str(),
                             entry->segment_index(),
                             num_segments);
  }
  return PteDataMap(loader, segment_base_offset, program);
}

Result<uint32_t> PteDataMap::find(std::string_view key) const {
  const auto* named_data = program_->named_data();
  for (uint32_t i = 0; named_data != nullptr && i < named_data->size(); ++i) {
    const auto* entry = named_data->Get(i);
    if (std::string_view(entry->key()->c_str(), entry->key()->size()) == key) {
      return entry->segment_index();
    }
  }
  return Error::NotFound;
}

Result<const TensorLayout> PteDataMap::get_tensor_layout(
    std::string_view /*key*/) const {
  return Error::NotFound;
}

Result<FreeableBuffer> PteDataMap::get_data(std::string_view key) const {
  Result<uint32_t> index = find(key);
  if (!index.ok()) {
    return index.error();
  }
  const auto* segment = program_->segments()->Get(*index);
  return loader_->load(
      segment_base_offset_ + segment->offset(),
      segment->size(),
      DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::External, *index));
}

Error PteDataMap::load_data_into(std::string_view key,
                                 void* buffer,
                                 size_t size) const {
  Result<uint32_t> index = find(key);
  if (!index.ok()) {
    return index.error();
  }
  const auto* segment = program_->segments()->Get(*index);
  ET_CHECK_OR_RETURN_ERROR(size <= segment->size(),
                           InvalidArgument,
                           "named data '%.*s' has %llu bytes, %zu requested",
                           static_cast<int>(key.size()),
                           key.data(),
                           static_cast<unsigned long long>(segment->size()),
                           size);
  return loader_->load_into(
      segment_base_offset_ + segment->offset(),
      size,
      DataLoader::SegmentInfo(DataLoader::SegmentInfo::Type::External, *index),
      buffer);
}

Result<uint32_t> PteDataMap::get_num_keys() const {
  const auto* named_data = program_->named_data();
  return named_data == nullptr ? 0 : named_data->size();
}

Result<const char*> PteDataMap::get_key(uint32_t index) const {
  const auto* named_data = program_->named_data();
  const uint32_t count = named_data == nullptr ? 0 : named_data->size();
  ET_CHECK_OR_RETURN_ERROR(index < count,
                           InvalidArgument,
                           "named data key %u out of range: %u keys",
                           index,
                           count);
  return named_data->Get(index)->key()->c_str();
}

} // namespace runtime
} // namespace executorch
