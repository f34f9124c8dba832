#include <executorch/extension/llm/tokenizers/tiktoken.h>

#include <fstream>
#include <unordered_map>

#include <executorch/extension/llm/tokenizers/bpe.h>
#include <executorch/extension/llm/tokenizers/regex.h>

namespace executorch {
namespace extension {
namespace llm {

const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::vector<std::string> llama3_special_tokens() {
  std::vector<std::string> tokens = {"<|begin_of_text|>",
                                     "<|end_of_text|>",
                                     "<|reserved_special_token_0|>",
                                     "<|reserved_special_token_1|>",
                                     "<|finetune_right_pad_id|>",
                                     "<|step_id|>",
                                     "<|start_header_id|>",
                                     "<|end_header_id|>",
                                     "<|eom_id|>",
                                     "<|eot_id|>",
                                     "<|python_tag|>"};
  for (int i = 2; tokens.size() < 256; ++i) {
    tokens.push_back("<|reserved_special_token_" + std::to_string(i) + "|>");
  }
  return tokens;
}

namespace {

// Decodes standard base64; false if `text` is not valid base64.
bool decode_base64(std::string_view text, std::string* out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  if (text.empty() || text.size() % 4 != 0) {
    return false;
  }
  out->clear();
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int padding = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++padding;
      } else if ((v[k] = value(c)) < 0 || padding > 0) {
        return false;
      }
    }
    uint32_t bits = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out->push_back(static_cast<char>(bits >> 16));
    if (padding < 2)
      out->push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (padding < 1)
      out->push_back(static_cast<char>(bits & 0xFF));
  }
  return true;
}

class TiktokenTokenizer final : public Tokenizer {
 public:
  TiktokenTokenizer(const std::string& path,
                    const std::string& pattern,
                    const std::vector<std::string>& special_tokens,
                    size_t bos_index,
                    size_t eos_index)
      : regex_(pattern) {
    read_ranks(path);
    // Every token of two bytes or more is the merge of each split of it
    // into two tokens, at its own rank.
    for (uint32_t rank = 0; rank < tokens_.size(); ++rank) {
      const std::string& token = tokens_[rank];
      for (size_t split = 1; split < token.size(); ++split) {
        auto left = ranks_.find(token.substr(0, split));
        auto right = ranks_.find(token.substr(split));
        if (left != ranks_.end() && right != ranks_.end()) {
          merges_.add(left->second, right->second, rank, rank);
        }
      }
    }
    for (int b = 0; b < 256; ++b) {
      auto it = ranks_.find(std::string(1, static_cast<char>(b)));
      if (it == ranks_.end()) {
        throw TokenizerError(path + ": byte " + std::to_string(b) +
                             " has no rank (every single byte needs one)");
      }
      byte_ranks_[b] = it->second;
    }
    if (bos_index >= special_tokens.size() ||
        eos_index >= special_tokens.size()) {
      throw TokenizerError(path + ": BOS/EOS index beyond the " +
                           std::to_string(special_tokens.size()) +
                           " special tokens");
    }
    first_special_ = tokens_.size();
    for (const std::string& special : special_tokens) {
      special_ids_.emplace(special, tokens_.size());
      tokens_.push_back(special);
    }
    special_regex_ = std::make_unique<Regex>(special_pattern(special_tokens));
    vocab_size_ = tokens_.size();
    bos_tok_ = first_special_ + bos_index;
    eos_tok_ = first_special_ + eos_index;
    set_stop_tokens([this](const char* piece, uint64_t* id) {
      auto it = special_ids_.find(piece);
      if (it == special_ids_.end())
        return false;
      *id = it->second;
      return true;
    });
  }

  std::vector<uint64_t> encode(std::string_view text,
                               int bos,
                               int eos) const override {
    std::vector<uint64_t> ids(std::max(bos, 0), bos_tok_);
    size_t cursor = 0;
    for (const auto& [begin, end] : special_regex_->find_all(text)) {
      encode_ordinary(text.substr(cursor, begin - cursor), &ids);
      ids.push_back(
          special_ids_.at(std::string(text.substr(begin, end - begin))));
      cursor = end;
    }
    encode_ordinary(text.substr(cursor), &ids);
    ids.insert(ids.end(), std::max(eos, 0), eos_tok_);
    return ids;
  }

  bool is_special(uint64_t token) const override {
    check_token(token);
    return token >= first_special_;
  }

 protected:
  void append_piece(uint64_t token,
                    bool /*at_text_start*/,
                    std::string* out) const override {
    check_token(token);
    out->append(tokens_[token]);
  }

 private:
  void read_ranks(const std::string& path) {
    std::ifstream file(path);
    if (!file) {
      throw TokenizerError(path + ": cannot open the file");
    }
    std::string line;
    std::string token;
    for (size_t line_number = 1; std::getline(file, line); ++line_number) {
      if (line.empty()) {
        continue;
      }
      const std::string at = path + ":" + std::to_string(line_number);
      size_t space = line.find(' ');
      if (space == std::string::npos ||
          !decode_base64(std::string_view(line).substr(0, space), &token)) {
        throw TokenizerError(at + ": expected \"<base64 token> <rank>\"");
      }
      char* end = nullptr;
      unsigned long long rank =
          std::strtoull(line.c_str() + space + 1, &end, 10);
      if (end == line.c_str() + space + 1 || rank >= (1u << 24)) {
        throw TokenizerError(at + ": bad rank '" + line.substr(space + 1) +
                             "'");
      }
      if (rank >= tokens_.size()) {
        tokens_.resize(rank + 1);
      }
      tokens_[rank] = token;
      ranks_[token] = static_cast<uint32_t>(rank);
    }
    if (tokens_.empty()) {
      throw TokenizerError(path + ": no ranks in the file");
    }
  }

  static std::string special_pattern(const std::vector<std::string>& tokens) {
    std::string pattern;
    for (const std::string& token : tokens) {
      if (!pattern.empty())
        pattern += '|';
      pattern += "\\Q" + token + "\\E";
    }
    return pattern;
  }

  void encode_ordinary(std::string_view text,
                       std::vector<uint64_t>* ids) const {
    std::vector<uint32_t> symbols;
    for (const auto& [begin, end] : regex_.find_all(text)) {
      std::string_view piece = text.substr(begin, end - begin);
      auto whole = ranks_.find(std::string(piece));
      if (whole != ranks_.end()) {
        ids->push_back(whole->second);
        continue;
      }
      symbols.clear();
      for (unsigned char b : piece) {
        symbols.push_back(byte_ranks_[b]);
      }
      merges_.apply(&symbols);
      ids->insert(ids->end(), symbols.begin(), symbols.end());
    }
  }

  Regex regex_;
  std::unique_ptr<Regex> special_regex_;
  std::vector<std::string> tokens_; // by id: ranks, then special tokens
  std::unordered_map<std::string, uint32_t> ranks_;
  std::unordered_map<std::string, uint64_t> special_ids_;
  uint32_t byte_ranks_[256];
  BpeMerges merges_;
  uint64_t first_special_ = 0;
};

} // namespace

std::unique_ptr<Tokenizer> load_tiktoken(
    const std::string& path,
    const std::string& pattern,
    const std::vector<std::string>& special_tokens,
    size_t bos_index,
    size_t eos_index) {
  return std::make_unique<TiktokenTokenizer>(
      path, pattern, special_tokens, bos_index, eos_index);
}

} // namespace llm
} // namespace extension
} // namespace executorch
