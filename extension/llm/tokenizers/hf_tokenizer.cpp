#include <executorch/extension/llm/tokenizers/hf_tokenizer.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include <executorch/extension/llm/tokenizers/bpe.h>
#include <executorch/extension/llm/tokenizers/regex.h>

namespace executorch {
namespace extension {
namespace llm {
namespace {

using json = nlohmann::json;

// The regex GPT-2's ByteLevel pre-tokenizer splits with (use_regex).
constexpr const char* kByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw TokenizerError(where + ": " + what);
}

const json& field(const json& object,
                  const char* name,
                  const std::string& where) {
  if (!object.is_object() || !object.contains(name)) {
    fail(where, std::string("missing field '") + name + "'");
  }
  return object.at(name);
}

std::string string_field(const json& object,
                         const char* name,
                         const std::string& where) {
  const json& value = field(object, name, where);
  if (!value.is_string()) {
    fail(where + "." + name, "expected a string");
  }
  return value.get<std::string>();
}

// A boolean field that may be absent or null (then `fallback`).
bool bool_field(const json& object, const char* name, bool fallback) {
  if (!object.contains(name) || object.at(name).is_null()) {
    return fallback;
  }
  return object.at(name).get<bool>();
}

void replace_all(std::string* text,
                 const std::string& from,
                 const std::string& to) {
  if (from.empty()) {
    return;
  }
  for (size_t pos = 0; (pos = text->find(from, pos)) != std::string::npos;
       pos += to.size()) {
    text->replace(pos, from.size(), to);
  }
}

// A regex matching `literal` exactly.
std::string escape_regex(const std::string& literal) {
  std::string out;
  for (char c : literal) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u)) {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  return out;
}

// The regex a Split or Replace `pattern` field describes: {"String": s} or
// {"Regex": r}.
std::string pattern_regex(const json& pattern, const std::string& where) {
  if (pattern.contains("Regex")) {
    return pattern.at("Regex").get<std::string>();
  }
  if (pattern.contains("String")) {
    return escape_regex(pattern.at("String").get<std::string>());
  }
  fail(where, "expected {\"String\": ...} or {\"Regex\": ...}");
}

// A component's "type" and, for a Sequence, its steps flattened.
std::vector<const json*> flatten(const json& component,
                                 const char* list_name,
                                 const std::string& where) {
  std::vector<const json*> steps;
  if (component.is_null()) {
    return steps;
  }
  if (string_field(component, "type", where) == "Sequence") {
    const json& list = field(component, list_name, where);
    for (size_t i = 0; i < list.size(); ++i) {
      auto inner =
          flatten(list[i],
                  list_name,
                  where + "." + list_name + "[" + std::to_string(i) + "]");
      steps.insert(steps.end(), inner.begin(), inner.end());
    }
  } else {
    steps.push_back(&component);
  }
  return steps;
}

// A piece of the text on its way through normalization and
// pre-tokenization; `at_text_start` when it begins the input text.
struct Piece {
  std::string text;
  bool at_text_start;
};

enum class PrependScheme { kAlways, kFirst, kNever };

PrependScheme metaspace_scheme(const json& step) {
  if (step.contains("prepend_scheme") &&
      step.at("prepend_scheme").is_string()) {
    const std::string scheme = step.at("prepend_scheme").get<std::string>();
    if (scheme == "first") {
      return PrependScheme::kFirst;
    }
    if (scheme == "never") {
      return PrependScheme::kNever;
    }
    return PrependScheme::kAlways;
  }
  return bool_field(step, "add_prefix_space", true) ? PrependScheme::kAlways
                                                    : PrependScheme::kNever;
}

struct NormalizerStep {
  std::string prepend;            // Prepend
  std::unique_ptr<Regex> replace; // Replace: what to replace
  std::string replace_with;
};

struct PreTokenizerStep {
  enum class Kind { kByteLevel, kSplit, kMetaspace, kDigits } kind;
  bool add_prefix_space = false; // ByteLevel
  std::unique_ptr<Regex> regex;  // ByteLevel (use_regex), Split, Digits
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  std::string replacement; // Metaspace
  PrependScheme prepend_scheme = PrependScheme::kAlways;
  bool split = true;
};

struct AddedToken {
  uint32_t id;
  std::string content;
  bool special;
  bool lstrip;
  bool rstrip;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

class HfTokenizer final : public Tokenizer {
 public:
  HfTokenizer(const std::string& path, const json& root) {
    load_model(field(root, "model", path), path + ": model");
    load_added_tokens(root, path);
    load_normalizer(root.value("normalizer", json()), "normalizer");
    load_pre_tokenizer(root.value("pre_tokenizer", json()), "pre_tokenizer");
    load_decoder(root.value("decoder", json()), "decoder");
    vocab_size_ = id_to_token_.size();
    build_pieces();
    find_bos_eos(path, root.value("post_processor", json()));
    set_stop_tokens([this](const char* piece, uint64_t* id) {
      auto it = added_ids_.find(piece);
      if (it == added_ids_.end()) {
        return false;
      }
      *id = it->second;
      return true;
    });
  }

  std::vector<uint64_t> encode(std::string_view text,
                               int bos,
                               int eos) const override {
    std::vector<uint64_t> ids;
    if (bos > 0 && bos_tok_ == kNoToken) {
      throw TokenizerError("encode: this tokenizer has no BOS token");
    }
    if (eos > 0 && eos_tok_ == kNoToken) {
      throw TokenizerError("encode: this tokenizer has no EOS token");
    }
    ids.insert(ids.end(), std::max(bos, 0), bos_tok_);
    size_t chunk_begin = 0;
    auto encode_chunk = [&](size_t begin, size_t end) {
      if (end > begin) {
        encode_text(
            Piece{std::string(text.substr(begin, end - begin)), begin == 0},
            &ids);
      }
    };
    for (size_t pos = 0; pos < text.size();) {
      const AddedToken* match = match_added(text, pos);
      if (match == nullptr) {
        ++pos;
        continue;
      }
      size_t begin = pos;
      size_t end = pos + match->content.size();
      if (match->lstrip) {
        while (begin > chunk_begin && is_space(text[begin - 1])) {
          --begin;
        }
      }
      if (match->rstrip) {
        while (end < text.size() && is_space(text[end])) {
          ++end;
        }
      }
      encode_chunk(chunk_begin, begin);
      ids.push_back(match->id);
      chunk_begin = pos = end;
    }
    encode_chunk(chunk_begin, text.size());
    ids.insert(ids.end(), std::max(eos, 0), eos_tok_);
    return ids;
  }

  bool is_special(uint64_t token) const override {
    check_token(token);
    return is_special_[token];
  }

 protected:
  void append_piece(uint64_t token,
                    bool at_text_start,
                    std::string* out) const override {
    check_token(token);
    const std::string& piece = pieces_[token];
    size_t skip = 0;
    if (at_text_start && !start_strip_.empty()) {
      for (size_t n = 0;
           n < start_strip_count_ &&
           piece.compare(skip, start_strip_.size(), start_strip_) == 0;
           ++n) {
        skip += start_strip_.size();
      }
    }
    out->append(piece, skip, std::string::npos);
  }

 private:
  void load_model(const json& model, const std::string& where) {
    const std::string type = model.value("type", std::string("BPE"));
    if (type != "BPE") {
      fail(where + ".type",
           "model '" + type + "' is not supported (only BPE is)");
    }
    if (!model.value("dropout", json()).is_null()) {
      fail(where + ".dropout", "BPE dropout is not supported");
    }
    for (const char* affix :
         {"continuing_subword_prefix", "end_of_word_suffix"}) {
      const json value = model.value(affix, json());
      if (!value.is_null() && !value.get<std::string>().empty()) {
        fail(where + "." + affix, "is not supported");
      }
    }
    byte_fallback_ = bool_field(model, "byte_fallback", false);
    fuse_unk_ = bool_field(model, "fuse_unk", false);
    ignore_merges_ = bool_field(model, "ignore_merges", false);

    const json& vocab = field(model, "vocab", where);
    if (!vocab.is_object()) {
      fail(where + ".vocab", "expected an object of token: id");
    }
    for (const auto& [token, id_json] : vocab.items()) {
      if (!id_json.is_number_unsigned()) {
        fail(where + ".vocab[\"" + token + "\"]", "expected an id >= 0");
      }
      set_token(id_json.get<uint64_t>(), token, where + ".vocab");
      vocab_.emplace(token, id_json.get<uint32_t>());
    }
    const json unk = model.value("unk_token", json());
    if (!unk.is_null()) {
      auto it = vocab_.find(unk.get<std::string>());
      if (it == vocab_.end()) {
        fail(where + ".unk_token",
             "'" + unk.get<std::string>() + "' is not in the vocabulary");
      }
      unk_id_ = it->second;
    }

    const json& merges = field(model, "merges", where);
    for (size_t i = 0; i < merges.size(); ++i) {
      const std::string at = where + ".merges[" + std::to_string(i) + "]";
      std::string left, right;
      if (merges[i].is_string()) {
        const std::string merge = merges[i].get<std::string>();
        size_t space = merge.find(' ');
        if (space == std::string::npos) {
          fail(at, "expected \"left right\", got \"" + merge + "\"");
        }
        left = merge.substr(0, space);
        right = merge.substr(space + 1);
      } else if (merges[i].is_array() && merges[i].size() == 2) {
        left = merges[i][0].get<std::string>();
        right = merges[i][1].get<std::string>();
      } else {
        fail(at, "expected \"left right\" or [left, right]");
      }
      const uint32_t left_id = vocab_id(left, at);
      const uint32_t right_id = vocab_id(right, at);
      merges_.add(left_id,
                  right_id,
                  static_cast<uint32_t>(i),
                  vocab_id(left + right, at));
    }
  }

  uint32_t vocab_id(const std::string& token, const std::string& where) const {
    auto it = vocab_.find(token);
    if (it == vocab_.end()) {
      fail(where, "'" + token + "' is not in the vocabulary");
    }
    return it->second;
  }

  void set_token(uint64_t id,
                 const std::string& token,
                 const std::string& where) {
    if (id >= (1u << 24)) {
      fail(where,
           "id " + std::to_string(id) + " of '" + token +
               "' is implausibly large");
    }
    if (id >= id_to_token_.size()) {
      id_to_token_.resize(id + 1);
      is_special_.resize(id + 1, false);
    }
    id_to_token_[id] = token;
  }

  void load_added_tokens(const json& root, const std::string& path) {
    const json added = root.value("added_tokens", json::array());
    for (size_t i = 0; i < added.size(); ++i) {
      const std::string at = path + ": added_tokens[" + std::to_string(i) + "]";
      const json& entry = added[i];
      if (bool_field(entry, "single_word", false)) {
        fail(at, "single_word added tokens are not supported");
      }
      AddedToken token{
          static_cast<uint32_t>(field(entry, "id", at).get<uint64_t>()),
          string_field(entry, "content", at),
          bool_field(entry, "special", false),
          bool_field(entry, "lstrip", false),
          bool_field(entry, "rstrip", false)};
      if (token.content.empty()) {
        fail(at, "empty content");
      }
      set_token(token.id, token.content, at);
      is_special_[token.id] = token.special;
      added_ids_[token.content] = token.id;
      added_.push_back(std::move(token));
    }
    // Longest first, so that the first candidate that matches is the
    // longest one (Hugging Face matches leftmost-longest).
    std::stable_sort(added_.begin(),
                     added_.end(),
                     [](const AddedToken& a, const AddedToken& b) {
                       return a.content.size() > b.content.size();
                     });
    for (size_t i = 0; i < added_.size(); ++i) {
      added_by_first_byte_[static_cast<unsigned char>(added_[i].content[0])]
          .push_back(i);
    }
  }

  const AddedToken* match_added(std::string_view text, size_t pos) const {
    for (size_t index :
         added_by_first_byte_[static_cast<unsigned char>(text[pos])]) {
      const AddedToken& token = added_[index];
      if (text.compare(pos, token.content.size(), token.content) == 0) {
        return &token;
      }
    }
    return nullptr;
  }

  void load_normalizer(const json& normalizer, const std::string& where) {
    for (const json* step : flatten(normalizer, "normalizers", where)) {
      const std::string type = string_field(*step, "type", where);
      NormalizerStep s;
      if (type == "Prepend") {
        s.prepend = string_field(*step, "prepend", where);
      } else if (type == "Replace") {
        s.replace = std::make_unique<Regex>(
            pattern_regex(field(*step, "pattern", where), where + ".pattern"));
        s.replace_with = string_field(*step, "content", where);
      } else {
        fail(where, "normalizer '" + type + "' is not supported");
      }
      normalizers_.push_back(std::move(s));
    }
  }

  void load_pre_tokenizer(const json& pre_tokenizer, const std::string& where) {
    for (const json* step : flatten(pre_tokenizer, "pretokenizers", where)) {
      const std::string type = string_field(*step, "type", where);
      PreTokenizerStep s;
      if (type == "ByteLevel") {
        s.kind = PreTokenizerStep::Kind::kByteLevel;
        s.add_prefix_space = bool_field(*step, "add_prefix_space", true);
        if (bool_field(*step, "use_regex", true)) {
          s.regex = std::make_unique<Regex>(kByteLevelPattern);
        }
      } else if (type == "Split") {
        s.kind = PreTokenizerStep::Kind::kSplit;
        s.regex = std::make_unique<Regex>(
            pattern_regex(field(*step, "pattern", where), where + ".pattern"));
        s.behavior = split_behavior(string_field(*step, "behavior", where),
                                    where + ".behavior");
        s.invert = bool_field(*step, "invert", false);
      } else if (type == "Metaspace") {
        s.kind = PreTokenizerStep::Kind::kMetaspace;
        s.replacement = string_field(*step, "replacement", where);
        s.prepend_scheme = metaspace_scheme(*step);
        s.split = bool_field(*step, "split", true);
        s.regex = std::make_unique<Regex>(escape_regex(s.replacement));
      } else if (type == "Digits") {
        s.kind = PreTokenizerStep::Kind::kDigits;
        s.regex = std::make_unique<Regex>("\\p{N}");
        s.behavior = bool_field(*step, "individual_digits", false)
                         ? SplitBehavior::kIsolated
                         : SplitBehavior::kContiguous;
      } else {
        fail(where, "pre-tokenizer '" + type + "' is not supported");
      }
      pre_tokenizers_.push_back(std::move(s));
    }
  }

  static SplitBehavior split_behavior(const std::string& name,
                                      const std::string& where) {
    if (name == "Removed")
      return SplitBehavior::kRemoved;
    if (name == "Isolated")
      return SplitBehavior::kIsolated;
    if (name == "MergedWithPrevious")
      return SplitBehavior::kMergedWithPrevious;
    if (name == "MergedWithNext")
      return SplitBehavior::kMergedWithNext;
    if (name == "Contiguous")
      return SplitBehavior::kContiguous;
    fail(where, "unknown split behavior '" + name + "'");
  }

  void load_decoder(const json& decoder, const std::string& where) {
    for (const json* step : flatten(decoder, "decoders", where)) {
      const std::string type = string_field(*step, "type", where);
      if (type == "ByteLevel" || type == "ByteFallback" || type == "Fuse") {
        decoder_steps_.push_back({type, "", ""});
      } else if (type == "Replace") {
        const json& pattern = field(*step, "pattern", where);
        if (!pattern.contains("String")) {
          fail(where, "Replace decoders with a regex are not supported");
        }
        decoder_steps_.push_back({type,
                                  pattern.at("String").get<std::string>(),
                                  string_field(*step, "content", where)});
      } else if (type == "Metaspace") {
        decoder_steps_.push_back(
            {type, string_field(*step, "replacement", where), " "});
        if (metaspace_scheme(*step) != PrependScheme::kNever) {
          start_strip_ = " ";
          start_strip_count_ = 1;
        }
      } else if (type == "Strip") {
        if (step->value("stop", 0) != 0) {
          fail(where, "Strip decoders with stop > 0 are not supported");
        }
        start_strip_ = string_field(*step, "content", where);
        start_strip_count_ = step->value("start", 0);
      } else {
        fail(where, "decoder '" + type + "' is not supported");
      }
    }
  }

  // The bytes each id decodes to, through the decoder steps (added tokens
  // too, as Hugging Face decodes them).
  void build_pieces() {
    pieces_.resize(id_to_token_.size());
    for (size_t id = 0; id < id_to_token_.size(); ++id) {
      std::string piece = id_to_token_[id];
      for (const DecoderStep& step : decoder_steps_) {
        if (step.type == "ByteLevel") {
          piece = byte_level_to_bytes(piece);
        } else if (step.type == "ByteFallback") {
          unsigned value = 0;
          char tail = 0;
          if (piece.size() == 6 &&
              std::sscanf(piece.c_str(), "<0x%2X%c", &value, &tail) == 2 &&
              tail == '>') {
            piece = std::string(1, static_cast<char>(value));
          }
        } else if (step.type == "Replace" || step.type == "Metaspace") {
          replace_all(&piece, step.from, step.to);
        }
      }
      pieces_[id] = std::move(piece);
    }
  }

  void find_bos_eos(const std::string& path, const json& post_processor) {
    auto id_of = [this](const std::string& token) -> uint64_t {
      auto it = added_ids_.find(token);
      if (it != added_ids_.end()) {
        return it->second;
      }
      auto v = vocab_.find(token);
      return v == vocab_.end() ? kNoToken : v->second;
    };
    // 1. tokenizer_config.json beside the file.
    const std::string dir = path.substr(0, path.find_last_of('/') + 1);
    std::ifstream config_file(dir + "tokenizer_config.json");
    if (config_file) {
      json config = json::parse(config_file, nullptr, false);
      auto token_name = [&](const char* key) -> std::string {
        if (!config.is_object() || !config.contains(key))
          return "";
        const json& v = config.at(key);
        if (v.is_string())
          return v.get<std::string>();
        if (v.is_object() && v.contains("content"))
          return v.at("content").get<std::string>();
        return "";
      };
      bos_tok_ = id_of(token_name("bos_token"));
      eos_tok_ = id_of(token_name("eos_token"));
    }
    // 2. The post-processor's template: the special token before the text.
    if (bos_tok_ == kNoToken) {
      for (const json* step :
           flatten(post_processor, "processors", "post_processor")) {
        if (step->value("type", "") != "TemplateProcessing" ||
            !step->contains("single")) {
          continue;
        }
        const json& single = step->at("single");
        if (!single.empty() && single[0].contains("SpecialToken")) {
          bos_tok_ = id_of(single[0]["SpecialToken"].value("id", ""));
        }
      }
    }
    // 3. Well-known names.
    for (const char* name : {"<|begin_of_text|>",
                             "<s>",
                             "<bos>",
                             "<|startoftext|>",
                             "<|endoftext|>"}) {
      if (bos_tok_ == kNoToken)
        bos_tok_ = id_of(name);
    }
    for (const char* name :
         {"<|end_of_text|>", "</s>", "<eos>", "<|endoftext|>", "<|im_end|>"}) {
      if (eos_tok_ == kNoToken)
        eos_tok_ = id_of(name);
    }
  }

  // Normalizes, pre-tokenizes and BPE-encodes a text chunk without added
  // tokens, appending its ids.
  void encode_text(Piece chunk, std::vector<uint64_t>* ids) const {
    for (const NormalizerStep& step : normalizers_) {
      if (step.replace) {
        std::string out;
        size_t cursor = 0;
        for (const auto& [begin, end] : step.replace->find_all(chunk.text)) {
          out.append(chunk.text, cursor, begin - cursor);
          out.append(step.replace_with);
          cursor = end;
        }
        out.append(chunk.text, cursor, std::string::npos);
        chunk.text = std::move(out);
      } else if (!chunk.text.empty()) {
        chunk.text.insert(0, step.prepend);
      }
    }
    std::vector<Piece> pieces{std::move(chunk)};
    for (const PreTokenizerStep& step : pre_tokenizers_) {
      std::vector<Piece> next;
      for (Piece& piece : pieces) {
        pre_tokenize(step, std::move(piece), &next);
      }
      pieces = std::move(next);
    }
    std::vector<uint32_t> symbols;
    for (const Piece& piece : pieces) {
      encode_word(piece.text, &symbols);
      ids->insert(ids->end(), symbols.begin(), symbols.end());
    }
  }

  void pre_tokenize(const PreTokenizerStep& step,
                    Piece piece,
                    std::vector<Piece>* out) const {
    using Kind = PreTokenizerStep::Kind;
    if (step.kind == Kind::kMetaspace) {
      replace_all(&piece.text, " ", step.replacement);
      bool prepend =
          step.prepend_scheme == PrependScheme::kAlways ||
          (step.prepend_scheme == PrependScheme::kFirst && piece.at_text_start);
      if (prepend && piece.text.compare(
                         0, step.replacement.size(), step.replacement) != 0) {
        piece.text.insert(0, step.replacement);
      }
      if (!step.split) {
        out->push_back(std::move(piece));
        return;
      }
    }
    if (step.kind == Kind::kByteLevel && step.add_prefix_space &&
        (piece.text.empty() || piece.text[0] != ' ')) {
      piece.text.insert(0, " ");
    }
    std::vector<std::string_view> parts;
    if (step.regex) {
      SplitBehavior behavior = step.kind == Kind::kMetaspace
                                   ? SplitBehavior::kMergedWithNext
                                   : step.behavior;
      parts = split_text(piece.text, *step.regex, behavior, step.invert);
    } else {
      parts.push_back(piece.text);
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string text(parts[i]);
      if (step.kind == Kind::kByteLevel) {
        text = bytes_to_byte_level(text);
      }
      out->push_back(Piece{std::move(text), piece.at_text_start && i == 0});
    }
  }

  // BPE over one pre-tokenized word: its characters (or their bytes, with
  // byte fallback) as symbols, then the merges.
  void encode_word(const std::string& word,
                   std::vector<uint32_t>* symbols) const {
    symbols->clear();
    if (word.empty()) {
      return;
    }
    if (ignore_merges_) {
      auto it = vocab_.find(word);
      if (it != vocab_.end()) {
        symbols->push_back(it->second);
        return;
      }
    }
    bool previous_unk = false;
    for (size_t i = 0; i < word.size();) {
      size_t len = std::min(utf8_char_length(word[i]), word.size() - i);
      std::string character = word.substr(i, len);
      i += len;
      auto it = vocab_.find(character);
      if (it != vocab_.end()) {
        symbols->push_back(it->second);
        previous_unk = false;
        continue;
      }
      if (byte_fallback_ && push_bytes(character, symbols)) {
        previous_unk = false;
        continue;
      }
      if (!unk_id_) {
        throw TokenizerError("encode: character '" + character +
                             "' is not in the vocabulary and the model has "
                             "no unk_token");
      }
      if (!(fuse_unk_ && previous_unk)) {
        symbols->push_back(*unk_id_);
      }
      previous_unk = true;
    }
    merges_.apply(symbols);
  }

  // Appends the <0xXX> tokens of `character`'s bytes; false if one is
  // missing from the vocabulary.
  bool push_bytes(const std::string& character,
                  std::vector<uint32_t>* symbols) const {
    size_t size = symbols->size();
    for (unsigned char byte : character) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", byte);
      auto it = vocab_.find(name);
      if (it == vocab_.end()) {
        symbols->resize(size);
        return false;
      }
      symbols->push_back(it->second);
    }
    return true;
  }

  struct DecoderStep {
    std::string type;
    std::string from;
    std::string to;
  };

  std::unordered_map<std::string, uint32_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> is_special_;
  BpeMerges merges_;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  std::optional<uint32_t> unk_id_;

  std::vector<AddedToken> added_;
  std::vector<size_t> added_by_first_byte_[256];
  std::unordered_map<std::string, uint32_t> added_ids_;

  std::vector<NormalizerStep> normalizers_;
  std::vector<PreTokenizerStep> pre_tokenizers_;
  std::vector<DecoderStep> decoder_steps_;
  std::vector<std::string> pieces_;
  std::string start_strip_;
  size_t start_strip_count_ = 0;
};

} // namespace

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw TokenizerError(path + ": cannot open the file");
  }
  json root;
  try {
    root = json::parse(file);
  } catch (const json::exception& e) {
    throw TokenizerError(path + ": not valid JSON: " + e.what());
  }
  try {
    return std::make_unique<HfTokenizer>(path, root);
  } catch (const json::exception& e) {
    throw TokenizerError(path + ": malformed tokenizer.json: " + e.what());
  }
}

} // namespace llm
} // namespace extension
} // namespace executorch
