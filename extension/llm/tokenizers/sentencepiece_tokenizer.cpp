#include <executorch/extension/llm/tokenizers/sentencepiece_tokenizer.h>

#include <sentencepiece_processor.h>

namespace executorch {
namespace extension {
namespace llm {
namespace {

constexpr const char kWordBoundary[] = "\xE2\x96\x81"; // U+2581

class SentencePieceTokenizer final : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& path) {
    const auto status = processor_.Load(path);
    if (!status.ok()) {
      throw TokenizerError(path +
                           ": not a SentencePiece model: " + status.ToString());
    }
    vocab_size_ = processor_.GetPieceSize();
    bos_tok_ = processor_.bos_id() >= 0 ? processor_.bos_id() : kNoToken;
    eos_tok_ = processor_.eos_id() >= 0 ? processor_.eos_id() : kNoToken;
    pieces_.resize(vocab_size_);
    for (int id = 0; id < static_cast<int>(vocab_size_); ++id) {
      pieces_[id] = surface(id);
    }
    set_stop_tokens([this](const char* piece, uint64_t* id) {
      int found = processor_.PieceToId(piece);
      if (found == processor_.unk_id() &&
          piece != processor_.IdToPiece(found)) {
        return false;
      }
      *id = found;
      return true;
    });
  }

  std::vector<uint64_t> encode(std::string_view text,
                               int bos,
                               int eos) const override {
    if ((bos > 0 && bos_tok_ == kNoToken) ||
        (eos > 0 && eos_tok_ == kNoToken)) {
      throw TokenizerError("encode: this SentencePiece model has no BOS/EOS");
    }
    std::vector<int> pieces;
    const auto status =
        processor_.Encode(std::string_view(text.data(), text.size()), &pieces);
    if (!status.ok()) {
      throw TokenizerError("encode: " + status.ToString());
    }
    std::vector<uint64_t> ids(std::max(bos, 0), bos_tok_);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    ids.insert(ids.end(), std::max(eos, 0), eos_tok_);
    return ids;
  }

  bool is_special(uint64_t token) const override {
    check_token(token);
    return processor_.IsControl(static_cast<int>(token));
  }

 protected:
  void append_piece(uint64_t token,
                    bool at_text_start,
                    std::string* out) const override {
    check_token(token);
    const std::string& piece = pieces_[token];
    size_t skip = at_text_start && !piece.empty() && piece[0] == ' ' ? 1 : 0;
    out->append(piece, skip, std::string::npos);
  }

 private:
  // What piece `id` adds to a text.
  std::string surface(int id) const {
    if (processor_.IsControl(id)) {
      return "";
    }
    if (processor_.IsUnknown(id)) {
      return " \xE2\x81\x87 "; // SentencePiece's default: " ⁇ "
    }
    std::string piece = processor_.IdToPiece(id);
    if (processor_.IsByte(id)) {
      return std::string(
          1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
    }
    std::string out;
    for (size_t pos = 0;;) {
      size_t next = piece.find(kWordBoundary, pos);
      out.append(piece, pos, next - pos);
      if (next == std::string::npos)
        break;
      out.push_back(' ');
      pos = next + sizeof(kWordBoundary) - 1;
    }
    return out;
  }

  sentencepiece::SentencePieceProcessor processor_;
  std::vector<std::string> pieces_;
};

} // namespace

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& path) {
  return std::make_unique<SentencePieceTokenizer>(path);
}

} // namespace llm
} // namespace extension
} // namespace executorch
