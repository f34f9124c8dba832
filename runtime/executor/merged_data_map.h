#pragma once

// MergedDataMap: two NamedDataMaps seen as one; a key is looked up in the
// first, then in the second. A Method gives its delegates the program's own
// named data merged with the external data (a .ptd) passed to load_method.
//
// Ownership: holds pointers; both maps must outlive it. Either may be null.

#include <executorch/runtime/core/named_data_map.h>

namespace executorch {
namespace runtime {

class MergedDataMap final : public NamedDataMap {
 public:
  // Errors: InvalidArgument when a key is in both maps (which one a
  // delegate meant would be ambiguous); the log names the key.
  ET_NODISCARD static Result<MergedDataMap> load(const NamedDataMap* first,
                                                 const NamedDataMap* second);

  ET_NODISCARD Result<const TensorLayout> get_tensor_layout(
      std::string_view key) const override;
  ET_NODISCARD Result<FreeableBuffer> get_data(
      std::string_view key) const override;
  ET_NODISCARD Error load_data_into(std::string_view key,
                                    void* buffer,
                                    size_t size) const override;
  ET_NODISCARD Result<uint32_t> get_num_keys() const override;
  ET_NODISCARD Result<const char*> get_key(uint32_t index) const override;

 private:
  MergedDataMap(const NamedDataMap* first, const NamedDataMap* second)
      : first_(first), second_(second) {}

  // The map holding `key`: first_ if it does, else second_ (which may not).
  const NamedDataMap* owner(std::string_view key) const;

  const NamedDataMap* first_;
  const NamedDataMap* second_;
};

} // namespace runtime
} // namespace executorch
