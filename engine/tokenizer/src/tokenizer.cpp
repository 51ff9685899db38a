#include "quire/engine/tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "quire/engine/model_error.h"
#include "special_tokens.h"

namespace quire::engine {

struct Tokenizer::Impl {
  sentencepiece::SentencePieceProcessor processor;
  detail::SpecialTokens special;
  // Classified once at load, so the per-token questions of streaming and
  // sampling do not go through SentencePiece's virtual calls and lookups.
  std::vector<PieceKind> kinds;
  std::vector<std::int16_t> bytes;  // byte value of byte pieces, else -1

  std::optional<std::int32_t> find(std::string_view piece) const {
    const int id = processor.PieceToId(piece);
    // PieceToId answers unk for a piece it does not know.
    if (processor.IdToPiece(id) != piece) return std::nullopt;
    return id;
  }

  void check(std::int32_t id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= kinds.size()) {
      throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary of " +
                              std::to_string(kinds.size()) + " tokens");
    }
  }
};

namespace {

std::string read_model_file(const std::filesystem::path& model_dir) {
  const std::filesystem::path path = model_dir / "tokenizer.model";
  std::error_code error;
  if (!std::filesystem::is_directory(model_dir, error)) {
    throw ModelError("model directory " + model_dir.string() + " does not exist");
  }
  if (!std::filesystem::exists(path, error)) {
    const bool has_json = std::filesystem::exists(model_dir / "tokenizer.json", error);
    throw ModelError("no tokenizer.model in " + model_dir.string() +
                     (has_json ? " (only tokenizer.json)" : "") +
                     ": Quire reads SentencePiece tokenizer.model files; models that ship only "
                     "a tokenizer.json are not supported yet");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError("cannot read " + path.string() + "; check its permissions");
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

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

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::filesystem::path& model_dir) {
  const std::string data = read_model_file(model_dir);
  const std::string path = (model_dir / "tokenizer.model").string();
  if (data.starts_with("version https://git-lfs")) {
    throw ModelError(path +
                     " is a Git LFS pointer, not the tokenizer itself; run \"git lfs pull\" "
                     "in the model directory or download the file again");
  }
  auto impl = std::make_unique<Impl>();
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

  detail::VocabularyView vocabulary;
  vocabulary.size = size;
  const Impl& view = *impl;
  vocabulary.find = [&view](std::string_view piece) { return view.find(piece); };
  auto valid = [size](int id) -> std::optional<std::int32_t> {
    if (id < 0 || id >= size) return std::nullopt;
    return id;
  };
  vocabulary.model_bos = valid(impl->processor.bos_id());
  vocabulary.model_eos = valid(impl->processor.eos_id());
  impl->special = detail::resolve_special_tokens(model_dir, vocabulary);
  return Tokenizer(std::move(impl));
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int> ids;
  if (const auto status = impl_->processor.Encode(text, &ids); !status.ok()) {
    throw std::runtime_error("cannot tokenize text: " + status.ToString());
  }
  std::vector<std::int32_t> result;
  result.reserve(ids.size() + 1);
  if (add_bos && impl_->special.bos) result.push_back(*impl_->special.bos);
  result.insert(result.end(), ids.begin(), ids.end());
  return result;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids) const {
  for (const std::int32_t id : ids)
    impl_->check(id);
  std::string text;
  const std::vector<int> copy(ids.begin(), ids.end());
  if (const auto status = impl_->processor.Decode(copy, &text); !status.ok()) {
    throw std::runtime_error("cannot decode token ids: " + status.ToString());
  }
  return text;
}

std::optional<std::int32_t> Tokenizer::bos() const {
  return impl_->special.bos;
}
const std::vector<std::int32_t>& Tokenizer::eos() const {
  return impl_->special.eos;
}
bool Tokenizer::is_eos(std::int32_t id) const {
  return std::find(impl_->special.eos.begin(), impl_->special.eos.end(), id) !=
         impl_->special.eos.end();
}
bool Tokenizer::adds_bos() const {
  return impl_->special.add_bos;
}
int Tokenizer::vocab_size() const {
  return static_cast<int>(impl_->kinds.size());
}

std::string Tokenizer::piece(std::int32_t id) const {
  impl_->check(id);
  return impl_->processor.IdToPiece(id);
}

std::optional<std::int32_t> Tokenizer::find_piece(std::string_view piece) const {
  return impl_->find(piece);
}

PieceKind Tokenizer::kind(std::int32_t id) const {
  impl_->check(id);
  return impl_->kinds[static_cast<std::size_t>(id)];
}

std::optional<std::uint8_t> Tokenizer::byte_value(std::int32_t id) const {
  impl_->check(id);
  const std::int16_t value = impl_->bytes[static_cast<std::size_t>(id)];
  if (value < 0) return std::nullopt;
  return static_cast<std::uint8_t>(value);
}

}  // namespace quire::engine
