// HfTokenizer: a Hugging Face `tokenizer.json` with a BPE model, as the
// `tokenizers` library encodes and decodes it: added and special tokens
// (lstrip/rstrip), normalizers (Prepend, Replace, Sequence), pre-tokenizers
// (ByteLevel, Split with a regex or string, Metaspace, Digits, Sequence),
// byte-level or byte-fallback BPE (merges, unk, ignore_merges), and the
// matching decoders (ByteLevel, Metaspace, Replace, ByteFallback, Fuse,
// Strip). A component it does not implement is refused at load, by name.
//
// BOS and EOS come from tokenizer_config.json next to the file when there is
// one, else from the post-processor's template, else from well-known special
// token names.
#pragma once

#include <memory>
#include <string>

#include <executorch/extension/llm/tokenizers/tokenizer.h>

namespace executorch {
namespace extension {
namespace llm {

// Reads `path` (a tokenizer.json); throws TokenizerError naming the field
// that is missing, malformed or not supported.
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path);

} // namespace llm
} // namespace extension
} // namespace executorch
