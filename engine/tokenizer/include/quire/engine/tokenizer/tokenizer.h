#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine {

// What a vocabulary entry is. Control pieces (<s>, </s>, <|eot_id|>: special
// tokens) never show up in text decoded with special tokens skipped; byte
// pieces (<0xE2>) carry one byte of a character the vocabulary has no piece
// for ("byte fallback"); Unused marks ids no entry has.
enum class PieceKind { Normal, Control, Byte, Unknown, Unused };

// A byte range [begin, end) of a text passed to encode().
struct TextRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct EncodeOptions {
  // Hugging Face's add_special_tokens: the tokens the post-processor adds
  // (Llama 3's <|begin_of_text|>). SentencePiece: bos() when adds_bos().
  bool add_special = false;
  // Recognise special tokens spelled in the text ("<|eot_id|>"), as prompt
  // templates need. Text a user typed must never get this: without it a
  // special token's spelling is tokenized as ordinary text.
  bool parse_special = false;
  // With parse_special: byte ranges of the text where special tokens are not
  // recognised (the messages inside a rendered template).
  std::span<const TextRange> literal = {};
};

namespace detail {
class TokenizerImpl;
}

// A model directory's tokenizer together with the special tokens its
// configuration files name. Two kinds of file are read, and nothing that uses
// a Tokenizer needs to know which one a model has:
//  - tokenizer.json, Hugging Face's tokenizer (byte-level BPE as in Llama 3,
//    Qwen and GPT-2, or SentencePiece-style BPE as in Llama 2, Mistral and
//    Gemma), with its added tokens, normalizer, pre-tokenizer, post-processor
//    and decoder;
//  - tokenizer.model, a SentencePiece model.
// When a directory has both, tokenizer.json is read: it is what transformers'
// AutoTokenizer loads (the "fast" tokenizer), and it carries the added tokens,
// normalizer and post-processor that the model's chat template and published
// ids were made with. A tokenizer.model beside it is either the same
// vocabulary or not SentencePiece at all (Llama 3's original/tokenizer.model
// is a tiktoken file).
// Loading validates everything up front and throws ModelError with a message
// a user can act on. Const member functions may be called from several
// threads at once. A moved-from Tokenizer may only be assigned to or destroyed.
class Tokenizer {
 public:
  // Reads <model_dir>/tokenizer.json or tokenizer.model and the optional
  // generation_config.json, config.json and tokenizer_config.json. BOS and EOS
  // are taken, key by key, from the first of these that names them
  // (config.json also through "text_config"), else from the SentencePiece
  // model itself.
  static Tokenizer load(const std::filesystem::path& model_dir);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text to token ids, exactly as Hugging Face's tokenizer (or SentencePiece)
  // encodes it.
  std::vector<std::int32_t> encode(std::string_view text, const EncodeOptions& options) const;
  // The same as encode(text, {.add_special = add_bos}): special tokens spelled
  // in the text are plain text; prompt formats insert special ids themselves.
  std::vector<std::int32_t> encode(std::string_view text, bool add_bos) const;

  // Token ids to text with special tokens skipped, exactly as the tokenizer
  // decodes them (SentencePiece drops the first word's "▁", byte pieces are
  // joined into characters, invalid bytes become U+FFFD). Throws
  // std::out_of_range for an id outside the vocabulary.
  std::string decode(std::span<const std::int32_t> ids) const;
  // skip_special = false keeps the special tokens' text, as Hugging Face's
  // decode(skip_special_tokens=False).
  std::string decode(std::span<const std::int32_t> ids, bool skip_special) const;

  std::optional<std::int32_t> bos() const;
  // Every id that ends a reply, in the order the configuration lists them,
  // without duplicates; may be empty.
  const std::vector<std::int32_t>& eos() const;
  bool is_eos(std::int32_t id) const;
  // Whether prompts should start with bos(). SentencePiece: tokenizer_config.json's
  // "add_bos_token", by default true whenever there is a BOS token.
  // tokenizer.json: its post-processor prepends the BOS token, or
  // tokenizer_config.json sets "add_bos_token" to true.
  bool adds_bos() const;

  // Highest id + 1 over the vocabulary and the added tokens.
  int vocab_size() const;
  // The vocabulary entry as stored ("▁Hello", "<0x0A>", "Ġhello", "<|eot_id|>").
  // Throws std::out_of_range for an id outside the vocabulary.
  std::string piece(std::int32_t id) const;
  std::optional<std::int32_t> find_piece(std::string_view piece) const;
  PieceKind kind(std::int32_t id) const;
  bool is_control(std::int32_t id) const { return kind(id) == PieceKind::Control; }
  // The byte a byte-fallback piece stands for; nullopt for every other piece.
  std::optional<std::uint8_t> byte_value(std::int32_t id) const;
  // The bytes a token adds to the decoded text in the middle of a sequence,
  // before broken UTF-8 is repaired: byte-level characters mapped back to
  // their bytes ("Ġhi" is " hi"; a token may hold part of a character), "▁"
  // as a space, a byte piece as its byte, a non-special added token as its
  // text. Empty for control, unknown and unused ids. What a grammar matches
  // the vocabulary against. Throws std::out_of_range for an id outside the
  // vocabulary.
  std::string token_bytes(std::int32_t id) const;

  // One line for `quire-cli inspect`: "tokenizer.json, BPE (byte-level),
  // 128256 tokens, 256 added (special 256)".
  std::string description() const;

 private:
  friend class TokenizerFactory;
  friend class StreamingDetokenizer;
  explicit Tokenizer(std::unique_ptr<detail::TokenizerImpl> impl);
  std::unique_ptr<detail::TokenizerImpl> impl_;
};

}  // namespace quire::engine
