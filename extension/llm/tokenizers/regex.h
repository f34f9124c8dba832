// Regex: a compiled Unicode regular expression (PCRE2, UTF-8 with Unicode
// properties, so \p{L}, \s and lookahead behave as in the Rust/Oniguruma
// patterns that tokenizer files carry), and the splitting of a text into the
// pieces a pre-tokenizer produces.
//
// A Regex is immutable after construction and may be used from several
// threads at once (each call allocates its own match data).
// Tested by test/llm/test_tokenizers.py through the tokenizers that use it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace executorch {
namespace extension {
namespace llm {

class Regex {
 public:
  // Compiles `pattern`; throws TokenizerError naming the pattern and the
  // offset of the syntax error.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The non-overlapping matches of the pattern in `text`, left to right, as
  // [begin, end) byte offsets.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

// How a split keeps the delimiters it finds (Hugging Face's
// SplitDelimiterBehavior).
enum class SplitBehavior {
  kRemoved,            // drop the matches
  kIsolated,           // each match is a piece of its own
  kMergedWithPrevious, // each match joins the piece before it
  kMergedWithNext,     // each match joins the piece after it
  kContiguous,         // adjacent matches form one piece
};

// Splits `text` at the matches of `regex` (or, with `invert`, at what does
// not match) and returns the non-empty pieces as views into `text`.
std::vector<std::string_view> split_text(std::string_view text,
                                         const Regex& regex,
                                         SplitBehavior behavior,
                                         bool invert = false);

} // namespace llm
} // namespace extension
} // namespace executorch
