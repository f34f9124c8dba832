// Tokenizer: text to token ids and back, the interface the text runner uses
// whatever the tokenizer file's format (Hugging Face tokenizer.json,
// SentencePiece .model, tiktoken ranks). load_tokenizer() picks the format
// from the file's contents.
//
// A loaded Tokenizer is immutable and may be shared across threads.
// Malformed files and invalid calls throw TokenizerError with a message that
// names the file, field or line; load_tokenizer() reports it as a Result.
// Tested against the reference Python packages (tokenizers, sentencepiece,
// tiktoken) by test/llm/test_tokenizers.py.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <executorch/extension/llm/tokenizers/tokenizer_error.h>
#include <executorch/runtime/core/result.h>

namespace executorch {
namespace extension {
namespace llm {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The ids of `text`, after `bos` BOS tokens and before `eos` EOS tokens.
  // Special tokens written in the text (e.g. "<|eot_id|>") become their ids.
  virtual std::vector<uint64_t> encode(std::string_view text,
                                       int bos = 0,
                                       int eos = 0) const = 0;

  // Appends to `out` the bytes that `token` adds to the text when it follows
  // `prev` (a leading space a format drops at the start of a text is dropped
  // when `prev` is BOS). The bytes of one token may be part of a UTF-8
  // character that the next tokens complete. Allocates nothing once `out`
  // has room.
  void decode_append(uint64_t prev, uint64_t token, std::string* out) const {
    append_piece(token, prev == bos_tok_, out);
  }

  // decode_append() into a new string.
  std::string decode(uint64_t prev, uint64_t token) const {
    std::string piece;
    decode_append(prev, token, &piece);
    return piece;
  }

  // The text of a whole sequence of ids as the format's reference library
  // decodes it (the first token kept decodes as the start of a text); with
  // `skip_special`, special tokens are left out.
  std::string decode_all(const std::vector<uint64_t>& ids,
                         bool skip_special = false) const;

  // Whether `token` is a special (control) token such as BOS or EOS.
  virtual bool is_special(uint64_t token) const = 0;

  uint64_t vocab_size() const {
    return vocab_size_;
  }
  uint64_t bos_tok() const {
    return bos_tok_;
  }
  uint64_t eos_tok() const {
    return eos_tok_;
  }
  // The tokens that end a generation: EOS and the end-of-turn tokens the
  // vocabulary defines (e.g. "<|eot_id|>", "<|im_end|>").
  const std::vector<uint64_t>& stop_tokens() const {
    return stop_tokens_;
  }

 protected:
  // Appends the bytes of `token`, decoded as the first token of a text when
  // `at_text_start`; throws TokenizerError for an id out of range.
  virtual void append_piece(uint64_t token,
                            bool at_text_start,
                            std::string* out) const = 0;
  // Checks that `token` is below vocab_size(); throws TokenizerError.
  void check_token(uint64_t token) const;
  // The id BOS/EOS hold when the vocabulary has none.
  static constexpr uint64_t kNoToken = UINT64_MAX;
  // Sets stop_tokens_ to EOS plus those of `end_of_turn_pieces` that
  // `find(piece)` knows (find returns false for unknown pieces).
  template <typename Find>
  void set_stop_tokens(Find find) {
    stop_tokens_.clear();
    if (eos_tok_ != kNoToken) {
      stop_tokens_.push_back(eos_tok_);
    }
    for (const char* piece : kEndOfTurnPieces) {
      uint64_t id = 0;
      if (find(piece, &id) && id != eos_tok_) {
        stop_tokens_.push_back(id);
      }
    }
  }

  static constexpr const char* kEndOfTurnPieces[] = {"<|eot_id|>",
                                                     "<|end_of_text|>",
                                                     "<|im_end|>",
                                                     "<|endoftext|>",
                                                     "<|end|>",
                                                     "</s>",
                                                     "<end_of_turn>"};

  uint64_t vocab_size_ = 0;
  uint64_t bos_tok_ = kNoToken;
  uint64_t eos_tok_ = kNoToken;
  std::vector<uint64_t> stop_tokens_;
};

// Loads the tokenizer at `path`: a Hugging Face tokenizer.json (or a
// directory holding one), a SentencePiece model, or a tiktoken ranks file
// (Llama 3's pattern and special tokens). On failure returns an error and,
// when `error_message` is given, stores there what was wrong.
::executorch::runtime::Result<std::unique_ptr<Tokenizer>> load_tokenizer(
    const std::string& path, std::string* error_message = nullptr);

} // namespace llm
} // namespace extension
} // namespace executorch
