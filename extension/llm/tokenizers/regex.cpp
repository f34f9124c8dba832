#include <executorch/extension/llm/tokenizers/regex.h>

#include <algorithm>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <executorch/extension/llm/tokenizers/tokenizer_error.h>

namespace executorch {
namespace extension {
namespace llm {

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() {
    pcre2_code_free(code);
  }
};

Regex::Regex(const std::string& pattern) : compiled_(new Compiled) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()),
                                  pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP,
                                  &error_code,
                                  &error_offset,
                                  nullptr);
  if (compiled_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    throw TokenizerError("invalid regular expression '" + pattern +
                         "' at offset " + std::to_string(error_offset) + ": " +
                         reinterpret_cast<const char*>(message));
  }
  // JIT compilation is an optimisation: the interpreter is used without it.
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() = default;

std::vector<std::pair<size_t, size_t>> Regex::find_all(
    std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  pcre2_match_data* match_data =
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t offset = 0;
  while (offset <= text.size()) {
    int rc = pcre2_match(
        compiled_->code, subject, text.size(), offset, 0, match_data, nullptr);
    if (rc < 0) {
      if (rc != PCRE2_ERROR_NOMATCH) {
        pcre2_match_data_free(match_data);
        throw TokenizerError("regular expression match failed (PCRE2 error " +
                             std::to_string(rc) + "), is the text UTF-8?");
      }
      break;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_data);
    size_t begin = ovector[0];
    size_t end = ovector[1];
    if (end > begin) {
      matches.emplace_back(begin, end);
      offset = end;
    } else {
      // An empty match: step over one UTF-8 character.
      offset = end + 1;
      while (offset < text.size() &&
             (static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80) {
        ++offset;
      }
    }
  }
  pcre2_match_data_free(match_data);
  return matches;
}

std::vector<std::string_view> split_text(std::string_view text,
                                         const Regex& regex,
                                         SplitBehavior behavior,
                                         bool invert) {
  // The text as alternating ranges, each marked as a delimiter or not.
  struct Range {
    size_t begin, end;
    bool delimiter;
  };
  std::vector<Range> ranges;
  size_t cursor = 0;
  for (const auto& [begin, end] : regex.find_all(text)) {
    if (begin > cursor) {
      ranges.push_back({cursor, begin, invert});
    }
    ranges.push_back({begin, end, !invert});
    cursor = end;
  }
  if (cursor < text.size()) {
    ranges.push_back({cursor, text.size(), invert});
  }

  std::vector<Range> pieces;
  switch (behavior) {
    case SplitBehavior::kRemoved:
      for (const Range& r : ranges) {
        if (!r.delimiter) {
          pieces.push_back(r);
        }
      }
      break;
    case SplitBehavior::kIsolated:
      pieces = ranges;
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_delimiter = false;
      for (const Range& r : ranges) {
        if (r.delimiter && !previous_delimiter && !pieces.empty()) {
          pieces.back().end = r.end;
        } else {
          pieces.push_back(r);
        }
        previous_delimiter = r.delimiter;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous_delimiter = false;
      for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
        if (it->delimiter && !previous_delimiter && !pieces.empty()) {
          pieces.back().begin = it->begin;
        } else {
          pieces.push_back(*it);
        }
        previous_delimiter = it->delimiter;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
    }
    case SplitBehavior::kContiguous: {
      bool previous_delimiter = false;
      for (const Range& r : ranges) {
        if (r.delimiter && previous_delimiter && !pieces.empty()) {
          pieces.back().end = r.end;
        } else {
          pieces.push_back(r);
        }
        previous_delimiter = r.delimiter;
      }
      break;
    }
  }
  std::vector<std::string_view> views;
  views.reserve(pieces.size());
  for (const Range& r : pieces) {
    if (r.end > r.begin) {
      views.push_back(text.substr(r.begin, r.end - r.begin));
    }
  }
  return views;
}

} // namespace llm
} // namespace extension
} // namespace executorch
