// TiktokenTokenizer: a tiktoken ranks file (one "<base64 token> <rank>" per
// line, the format of Llama 3's tokenizer.model), encoded as tiktoken does:
// special tokens first, then the pre-tokenizer regex's matches, each merged
// by rank from its bytes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <executorch/extension/llm/tokenizers/tokenizer.h>

namespace executorch {
namespace extension {
namespace llm {

// Llama 3's pre-tokenizer pattern and special tokens (<|begin_of_text|>,
// <|end_of_text|>, reserved tokens, headers, <|eot_id|>: 256 in all).
extern const char* const kLlama3Pattern;
std::vector<std::string> llama3_special_tokens();

// Reads the ranks at `path`; the special tokens take the ids after the
// highest rank, in order; BOS and EOS are special_tokens[bos_index] and
// special_tokens[eos_index]. Throws TokenizerError naming the line that is
// malformed.
std::unique_ptr<Tokenizer> load_tiktoken(
    const std::string& path,
    const std::string& pattern = kLlama3Pattern,
    const std::vector<std::string>& special_tokens = llama3_special_tokens(),
    size_t bos_index = 0,
    size_t eos_index = 1);

} // namespace llm
} // namespace extension
} // namespace executorch
