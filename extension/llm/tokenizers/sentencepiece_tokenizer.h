// SentencePieceTokenizer: a SentencePiece .model (BPE or unigram, with byte
// fallback), through Debian's libsentencepiece. Encodes as
// SentencePieceProcessor::Encode does; decodes piece by piece (U+2581 as a
// space, <0xXX> pieces as bytes, control pieces as nothing).
#pragma once

#include <memory>
#include <string>

#include <executorch/extension/llm/tokenizers/tokenizer.h>

namespace executorch {
namespace extension {
namespace llm {

// Reads the model at `path`; throws TokenizerError with SentencePiece's
// message when it is not a valid model.
std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path);

} // namespace llm
} // namespace extension
} // namespace executorch
