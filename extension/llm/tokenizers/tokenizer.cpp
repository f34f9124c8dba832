#include <executorch/extension/llm/tokenizers/tokenizer.h>

#include <sys/stat.h>
#include <fstream>

#include <executorch/extension/llm/tokenizers/hf_tokenizer.h>
#include <executorch/extension/llm/tokenizers/sentencepiece_tokenizer.h>
#include <executorch/extension/llm/tokenizers/tiktoken.h>
#include <executorch/runtime/platform/log.h>

namespace executorch {
namespace extension {
namespace llm {

using ::executorch::runtime::Error;
using ::executorch::runtime::Result;

void Tokenizer::check_token(uint64_t token) const {
  if (token >= vocab_size_) {
    throw TokenizerError("token id " + std::to_string(token) +
                         " is out of range: the vocabulary has " +
                         std::to_string(vocab_size_) + " tokens");
  }
}

std::string Tokenizer::decode_all(const std::vector<uint64_t>& ids,
                                  bool skip_special) const {
  std::string text;
  bool at_text_start = true;
  for (uint64_t id : ids) {
    if (skip_special && is_special(id)) {
      continue;
    }
    append_piece(id, at_text_start, &text);
    at_text_start = false;
  }
  return text;
}

namespace {

enum class Format { kHuggingFace, kSentencePiece, kTiktoken };

// Tells the formats apart by their first bytes: JSON starts with '{', a
// SentencePiece model is a protobuf (field 1, wire type 2: 0x0A), tiktoken is
// base64 text.
Format detect_format(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw TokenizerError(path + ": cannot open the file");
  }
  char first = 0;
  if (!file.get(first)) {
    throw TokenizerError(path + ": the file is empty");
  }
  if (first == '\x0A') {
    return Format::kSentencePiece;
  }
  while (std::isspace(static_cast<unsigned char>(first)) && file.get(first)) {
  }
  return first == '{' ? Format::kHuggingFace : Format::kTiktoken;
}

} // namespace

Result<std::unique_ptr<Tokenizer>> load_tokenizer(const std::string& path,
                                                  std::string* error_message) {
  try {
    std::string file = path;
    struct stat info {};
    if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      file = path + "/tokenizer.json";
    }
    switch (detect_format(file)) {
      case Format::kHuggingFace:
        return load_hf_tokenizer(file);
      case Format::kSentencePiece:
        return load_sentencepiece(file);
      case Format::kTiktoken:
        return load_tiktoken(file);
    }
    throw TokenizerError(file + ": unknown tokenizer format");
  } catch (const std::exception& e) {
    ET_LOG(Error, "Loading the tokenizer failed: %s", e.what());
    if (error_message != nullptr) {
      *error_message = e.what();
    }
    return Error::InvalidArgument;
  }
}

} // namespace llm
} // namespace extension
} // namespace executorch
