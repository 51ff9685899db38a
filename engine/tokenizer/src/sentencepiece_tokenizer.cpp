#include "sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <unordered_set>

#include "quire/engine/model_error.h"
#include "token_trie.h"

namespace quire::engine::detail {
namespace {

PieceKind classify(const sentencepiece::SentencePieceProcessor& processor, int id) {
  if (processor.IsControl(id)) return PieceKind::Control;
  if (processor.IsByte(id)) return PieceKind::Byte;
  if (processor.IsUnknown(id)) return PieceKind::Unknown;
  if (processor.IsUnused(id)) return PieceKind::Unused;
  return PieceKind::Normal;
}

// Byte pieces are spelled "<0xAB>"; -1 for anything else.
std::int16_t parse_byte_piece(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  unsigned value = 0;
  const char* digits = piece.data() + 3;
  const auto [end, error] = std::from_chars(digits, digits + 2, value, 16);
  if (error != std::errc() || end != digits + 2) return -1;
  return static_cast<std::int16_t>(value);
}

class SentencePieceTokenizer final : public TokenizerImpl {
 public:
  sentencepiece::SentencePieceProcessor processor;
  // Classified once at load, so the per-token questions of streaming and
  // sampling do not go through SentencePiece's virtual calls and lookups.
  std::vector<PieceKind> kinds;
  std::vector<std::int16_t> bytes;  // byte value of byte pieces, else -1
  // What parse_special recognises in text: the control pieces and the
  // special tokens tokenizer_config.json lists that the vocabulary has.
  SpecialTextMatcher special_text;

  std::vector<std::int32_t> encode(std::string_view text,
                                   const EncodeOptions& options) const override {
    std::vector<std::int32_t> result;
    if (options.add_special && special.add_bos && special.bos) result.push_back(*special.bos);
    if (!options.parse_special) {
      encode_plain(text, result);
      return result;
    }
    // Like transformers' LlamaTokenizer: the text between special tokens is
    // encoded piece by piece, each with SentencePiece's own dummy prefix.
    special_text.split(text, options.literal, [&](std::string_view plain, std::int32_t id) {
      if (!plain.empty()) encode_plain(plain, result);
      if (id >= 0) result.push_back(id);
    });
    return result;
  }

  void encode_plain(std::string_view text, std::vector<std::int32_t>& out) const {
    std::vector<int> ids;
    if (const auto status = processor.Encode(text, &ids); !status.ok()) {
      throw std::runtime_error("cannot tokenize text: " + status.ToString());
    }
    out.insert(out.end(), ids.begin(), ids.end());
  }

  std::string decode(std::span<const std::int32_t> ids, bool skip_special) const override {
    for (const std::int32_t id : ids)
      check_id(id, vocab_size());
    std::string text;
    auto decode_run = [&](std::span<const std::int32_t> run) {
      std::string part;
      const std::vector<int> copy(run.begin(), run.end());
      if (const auto status = processor.Decode(copy, &part); !status.ok()) {
        throw std::runtime_error("cannot decode token ids: " + status.ToString());
      }
      text += part;
    };
    if (skip_special) {
      decode_run(ids);
      return text;
    }
    // SentencePiece hides control pieces; their text goes between the runs.
    std::size_t begin = 0;
    for (std::size_t i = 0; i <= ids.size(); ++i) {
      if (i < ids.size() && kinds[static_cast<std::size_t>(ids[i])] != PieceKind::Control) continue;
      // The decoder drops a leading "▁" only at the very start, as
      // transformers' LlamaTokenizer does after a special token.
      if (i > begin) {
        std::vector<std::int32_t> run(ids.begin() + static_cast<std::ptrdiff_t>(begin),
                                      ids.begin() + static_cast<std::ptrdiff_t>(i));
        if (!text.empty() && processor.IdToPiece(run.front()).starts_with("\xE2\x96\x81")) {
          text += ' ';
        }
        decode_run(run);
      }
      if (i < ids.size()) text += processor.IdToPiece(ids[i]);
      begin = i + 1;
    }
    return text;
  }

  int vocab_size() const override { return static_cast<int>(kinds.size()); }

  std::string piece(std::int32_t id) const override {
    check_id(id, vocab_size());
    return processor.IdToPiece(id);
  }

  std::optional<std::int32_t> find_piece(std::string_view piece) const override {
    const int id = processor.PieceToId(piece);
    // PieceToId answers unk for a piece it does not know.
    if (processor.IdToPiece(id) != piece) return std::nullopt;
    return id;
  }

  PieceKind kind(std::int32_t id) const override {
    check_id(id, vocab_size());
    return kinds[static_cast<std::size_t>(id)];
  }

  std::optional<std::uint8_t> byte_value(std::int32_t id) const override {
    check_id(id, vocab_size());
    const std::int16_t value = bytes[static_cast<std::size_t>(id)];
    if (value < 0) return std::nullopt;
    return static_cast<std::uint8_t>(value);
  }

  std::string token_bytes(std::int32_t id) const override {
    check_id(id, vocab_size());
    const auto index = static_cast<std::size_t>(id);
    if (bytes[index] >= 0) return std::string(1, static_cast<char>(bytes[index]));
    if (kinds[index] != PieceKind::Normal) return {};
    std::string text;
    const std::string piece = processor.IdToPiece(id);
    static constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // ▁
    for (std::size_t position = 0; position < piece.size();) {
      if (piece.compare(position, kSpaceMark.size(), kSpaceMark) == 0) {
        text += ' ';
        position += kSpaceMark.size();
      } else {
        text += piece[position++];
      }
    }
    return text;
  }

  bool sentencepiece_byte_runs() const override { return true; }

  std::string description() const override {
    const auto byte_count = std::count(kinds.begin(), kinds.end(), PieceKind::Byte);
    const auto control_count = std::count(kinds.begin(), kinds.end(), PieceKind::Control);
    return "tokenizer.model, SentencePiece, " + std::to_string(kinds.size()) + " tokens, " +
           std::to_string(control_count) + " control, " + std::to_string(byte_count) + " bytes";
  }
};

}  // namespace

std::unique_ptr<TokenizerImpl> load_sentencepiece(const std::string& data,
                                                  const std::filesystem::path& file_path,
                                                  const std::filesystem::path& model_dir) {
  const std::string path = file_path.string();
  auto impl = std::make_unique<SentencePieceTokenizer>();
  if (const auto status = impl->processor.LoadFromSerializedProto(data); !status.ok()) {
    // SentencePiece's own reason names its source lines, which helps nobody here.
    throw ModelError(path + " is not a SentencePiece model; download the file again");
  }
  const int size = impl->processor.GetPieceSize();
  if (size <= 0) throw ModelError(path + " is not a SentencePiece model (it has no pieces)");

  impl->kinds.resize(static_cast<std::size_t>(size));
  impl->bytes.assign(static_cast<std::size_t>(size), -1);
  for (int id = 0; id < size; ++id) {
    const auto index = static_cast<std::size_t>(id);
    impl->kinds[index] = classify(impl->processor, id);
    if (impl->kinds[index] == PieceKind::Byte) {
      impl->bytes[index] = parse_byte_piece(impl->processor.IdToPiece(id));
      if (impl->bytes[index] < 0) {
        throw ModelError(path + " is not a valid SentencePiece model (byte piece " +
                         std::to_string(id) + " is \"" + impl->processor.IdToPiece(id) +
                         "\"); download the file again");
      }
    }
  }

  VocabularyView vocabulary;
  vocabulary.size = size;
  const SentencePieceTokenizer& view = *impl;
  vocabulary.find = [&view](std::string_view piece) { return view.find_piece(piece); };
  auto valid = [size](int id) -> std::optional<std::int32_t> {
    if (id < 0 || id >= size) return std::nullopt;
    return id;
  };
  vocabulary.model_bos = valid(impl->processor.bos_id());
  vocabulary.model_eos = valid(impl->processor.eos_id());
  impl->special = resolve_special_tokens(model_dir, vocabulary);

  std::vector<std::pair<std::string, std::int32_t>> specials;
  std::unordered_set<std::int32_t> seen;
  for (int id = 0; id < size; ++id) {
    if (impl->kinds[static_cast<std::size_t>(id)] == PieceKind::Control) {
      specials.emplace_back(impl->processor.IdToPiece(id), id);
      seen.insert(id);
    }
  }
  for (const std::string& name : impl->special.configured_special) {
    if (const auto id = impl->find_piece(name); id && seen.insert(*id).second) {
      specials.emplace_back(name, *id);
    }
  }
  impl->special_text = SpecialTextMatcher(std::move(specials));
  return impl;
}

}  // namespace quire::engine::detail
