#include <executorch/runtime/executor/merged_data_map.h>

#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace runtime {

namespace {

uint32_t num_keys(const NamedDataMap* map) {
  if (map == nullptr) {
    return 0;
  }
  Result<uint32_t> n = map->get_num_keys();
  return n.ok() ? *n : 0;
}

// Whether `map` lists `key` (compared key by key: a lookup through
// get_data would load the bytes).
bool has_key(const NamedDataMap* map, std::string_view key) {
  const uint32_t n = num_keys(map);
  for (uint32_t i = 0; i < n; ++i) {
    Result<const char*> k = map->get_key(i);
    if (k.ok() && std::string_view(*k) == key) {
      return true;
    }
  }
  return false;
}

} // namespace

Result<MergedDataMap> MergedDataMap::load(const NamedDataMap* first,
                                          const NamedDataMap* second) {
  const uint32_t n = num_keys(second);
  for (uint32_t i = 0; first != nullptr && i < n; ++i) {
    Result<const char*> key = second->get_key(i);
    if (!key.ok()) {
      return key.error();
    }
    ET_CHECK_OR_RETURN_ERROR(!has_key(first, *key),
                             InvalidArgument,
                             "named data key '%s' is both in the program and "
                             "in the external data",
                             *key);
  }
  return MergedDataMap(first, second);
}

const NamedDataMap* MergedDataMap::owner(std::string_view key) const {
  return has_key(first_, key) ? first_ : second_;
}

Result<const TensorLayout> MergedDataMap::get_tensor_layout(
    std::string_view key) const {
  const NamedDataMap* map = owner(key);
  if (map == nullptr) {
    return Error::NotFound;
  }
  return map->get_tensor_layout(key);
}

Result<FreeableBuffer> MergedDataMap::get_data(std::string_view key) const {
  const NamedDataMap* map = owner(key);
  if (map == nullptr) {
    return Error::NotFound;
  }
  return map->get_data(key);
}

Error MergedDataMap::load_data_into(std::string_view key,
                                    void* buffer,
                                    size_t size) const {
  const NamedDataMap* map = owner(key);
  if (map == nullptr) {
    return Error::NotFound;
  }
  return map->load_data_into(key, buffer, size);
}

Result<uint32_t> MergedDataMap::get_num_keys() const {
  return num_keys(first_) + num_keys(second_);
}

Result<const char*> MergedDataMap::get_key(uint32_t index) const {
  const uint32_t n = num_keys(first_);
  if (index < n) {
    return first_->get_key(index);
  }
  ET_CHECK_OR_RETURN_ERROR(second_ != nullptr && index - n < num_keys(second_),
                           InvalidArgument,
                           "named data key %u out of range: %u keys",
                           index,
                           n + num_keys(second_));
  return second_->get_key(index - n);
}

} // namespace runtime
} // namespace executorch
