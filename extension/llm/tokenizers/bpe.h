// The pieces byte-pair-encoding tokenizers share: the merge table that
// turns a sequence of symbol ids into tokens, and GPT-2's byte-level
// alphabet (every byte as a printable character).
//
// Immutable after construction; safe to share across threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace executorch {
namespace extension {
namespace llm {

// Which adjacent token pairs merge into which token, and in what order.
class BpeMerges {
 public:
  // Records that `left` followed by `right` merges into `merged`, with
  // priority `rank` (lower merges first). A pair given twice keeps its
  // lowest rank.
  void add(uint32_t left, uint32_t right, uint32_t rank, uint32_t merged);

  // Merges `symbols` in place: repeatedly the adjacent pair of lowest rank
  // (the leftmost among equals), until no pair merges.
  void apply(std::vector<uint32_t>* symbols) const;

  size_t size() const {
    return pairs_.size();
  }

 private:
  struct Merge {
    uint32_t rank;
    uint32_t merged;
  };
  static uint64_t key(uint32_t left, uint32_t right) {
    return (static_cast<uint64_t>(left) << 32) | right;
  }
  std::unordered_map<uint64_t, Merge> pairs_;
};

// GPT-2's byte-level alphabet: each byte of `bytes` as the character that
// stands for it, UTF-8 encoded.
std::string bytes_to_byte_level(std::string_view bytes);

// The inverse: the bytes the byte-level characters of `text` stand for;
// characters outside the alphabet are kept as they are.
std::string byte_level_to_bytes(std::string_view text);

// The length in bytes of the UTF-8 character that starts with `lead`
// (1 for a stray continuation or invalid byte).
size_t utf8_char_length(unsigned char lead);

} // namespace llm
} // namespace extension
} // namespace executorch
