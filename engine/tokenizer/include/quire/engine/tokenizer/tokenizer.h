#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine {

// What a vocabulary entry is, as SentencePiece classifies it. Control pieces
// (<s>, </s>) never show up in decoded text; byte pieces (<0xE2>) carry one
// byte of a character the vocabulary has no piece for ("byte fallback").
enum class PieceKind { Normal, Control, Byte, Unknown, Unused };

// A model directory's SentencePiece tokenizer (tokenizer.model) together with
// the special tokens its configuration files name. Loading validates
// everything up front and throws ModelError with a message a user can act on.
// Const member functions may be called from several threads at once. A
// moved-from Tokenizer may only be assigned to or destroyed.
class Tokenizer {
 public:
  // Reads <model_dir>/tokenizer.model and the optional generation_config.json,
  // config.json and tokenizer_config.json. BOS and EOS are taken, key by key,
  // from the first of these that names them (config.json also through
  // "text_config"), else from the SentencePiece model itself.
  static Tokenizer load(const std::filesystem::path& model_dir);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text to token ids. Text that looks like a control piece ("<s>") is encoded
  // as plain text; prompt formats insert special ids themselves. add_bos
  // prepends bos() when the tokenizer has one.
  std::vector<std::int32_t> encode(std::string_view text, bool add_bos) const;

  // Token ids to text, exactly as SentencePiece decodes them: control pieces
  // vanish, the leading "▁" of the first word is dropped, byte pieces are
  // joined into characters and invalid bytes become U+FFFD. Throws
  // std::out_of_range for an id outside the vocabulary.
  std::string decode(std::span<const std::int32_t> ids) const;

  std::optional<std::int32_t> bos() const;
  // Every id that ends a reply, in the order the configuration lists them,
  // without duplicates; may be empty.
  const std::vector<std::int32_t>& eos() const;
  bool is_eos(std::int32_t id) const;
  // Whether prompts should start with bos() (tokenizer_config.json's
  // "add_bos_token"; by default true whenever there is a BOS token).
  bool adds_bos() const;

  int vocab_size() const;
  // The vocabulary entry as stored ("▁Hello", "<0x0A>", "</s>"). Throws
  // std::out_of_range for an id outside the vocabulary.
  std::string piece(std::int32_t id) const;
  std::optional<std::int32_t> find_piece(std::string_view piece) const;
  PieceKind kind(std::int32_t id) const;
  bool is_control(std::int32_t id) const { return kind(id) == PieceKind::Control; }
  // The byte a byte-fallback piece stands for; nullopt for every other piece.
  std::optional<std::uint8_t> byte_value(std::int32_t id) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace quire::engine
