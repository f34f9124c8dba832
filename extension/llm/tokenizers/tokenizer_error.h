// TokenizerError: what a tokenizer file or call got wrong, and where (the
// file, the JSON field, the line). Tokenizers throw it internally; the
// public entry points (load_tokenizer, the runner) turn it into an Error and
// a message.
#pragma once

#include <stdexcept>
#include <string>

namespace executorch {
namespace extension {
namespace llm {

class TokenizerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

} // namespace llm
} // namespace extension
} // namespace executorch
