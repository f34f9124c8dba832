#include <executorch/extension/llm/tokenizers/bpe.h>

#include <array>
#include <limits>

namespace executorch {
namespace extension {
namespace llm {

void BpeMerges::add(uint32_t left,
                    uint32_t right,
                    uint32_t rank,
                    uint32_t merged) {
  auto [it, inserted] = pairs_.emplace(key(left, right), Merge{rank, merged});
  if (!inserted && rank < it->second.rank) {
    it->second = Merge{rank, merged};
  }
}

void BpeMerges::apply(std::vector<uint32_t>* symbols) const {
  std::vector<uint32_t>& s = *symbols;
  while (s.size() > 1) {
    uint32_t best_rank = std::numeric_limits<uint32_t>::max();
    size_t best_pos = 0;
    uint32_t best_merged = 0;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      auto it = pairs_.find(key(s[i], s[i + 1]));
      if (it != pairs_.end() && it->second.rank < best_rank) {
        best_rank = it->second.rank;
        best_pos = i;
        best_merged = it->second.merged;
      }
    }
    if (best_rank == std::numeric_limits<uint32_t>::max()) {
      return;
    }
    s[best_pos] = best_merged;
    s.erase(s.begin() + best_pos + 1);
  }
}

namespace {

// The code point that stands for each byte: printable Latin-1 bytes stand
// for themselves, the others for 256, 257, ... in byte order.
const std::array<uint32_t, 256>& byte_level_code_points() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? b : next++;
    }
    return t;
  }();
  return table;
}

void append_utf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

} // namespace

size_t utf8_char_length(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) {
    return 4;
  }
  if (lead >= 0xE0 && lead < 0xF0) {
    return 3;
  }
  if (lead >= 0xC0 && lead < 0xE0) {
    return 2;
  }
  return 1;
}

std::string bytes_to_byte_level(std::string_view bytes) {
  const auto& table = byte_level_code_points();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    append_utf8(table[b], &out);
  }
  return out;
}

std::string byte_level_to_bytes(std::string_view text) {
  // Byte-level code points are all below 0x144 (2-byte UTF-8 at most).
  static const std::array<int, 0x200> inverse = [] {
    std::array<int, 0x200> inv;
    inv.fill(-1);
    const auto& table = byte_level_code_points();
    for (int b = 0; b < 256; ++b) {
      inv[table[b]] = b;
    }
    return inv;
  }();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char lead = static_cast<unsigned char>(text[i]);
    size_t len = std::min(utf8_char_length(lead), text.size() - i);
    uint32_t cp = lead;
    if (len == 2) {
      cp = ((lead & 0x1F) << 6) |
           (static_cast<unsigned char>(text[i + 1]) & 0x3F);
    }
    if (len <= 2 && cp < inverse.size() && inverse[cp] >= 0) {
      out.push_back(static_cast<char>(inverse[cp]));
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

} // namespace llm
} // namespace extension
} // namespace executorch
