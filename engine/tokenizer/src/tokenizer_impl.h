#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"
#include "special_tokens.h"

namespace quire::engine {
namespace detail {

// One kind of tokenizer file behind the Tokenizer facade. Implementations
// validate ids themselves (std::out_of_range) and are immutable after load,
// apart from internal caches that are safe to use from several threads.
class TokenizerImpl {
 public:
  virtual ~TokenizerImpl() = default;

  virtual std::vector<std::int32_t> encode(std::string_view text,
                                           const EncodeOptions& options) const = 0;
  virtual std::string decode(std::span<const std::int32_t> ids, bool skip_special) const = 0;
  virtual int vocab_size() const = 0;
  virtual std::string piece(std::int32_t id) const = 0;
  virtual std::optional<std::int32_t> find_piece(std::string_view piece) const = 0;
  virtual PieceKind kind(std::int32_t id) const = 0;
  virtual std::optional<std::uint8_t> byte_value(std::int32_t id) const = 0;
  virtual std::string token_bytes(std::int32_t id) const = 0;
  virtual std::string description() const = 0;
  // SentencePiece decodes a run of byte pieces character by character from
  // the run's start, one U+FFFD per byte it cannot use; streaming then
  // decides characters from the pieces' bytes rather than from the text.
  virtual bool sentencepiece_byte_runs() const { return false; }

  // Resolved once at load from the configuration files.
  SpecialTokens special;
};

inline void check_id(std::int32_t id, int vocab_size) {
  if (id < 0 || id >= vocab_size) {
    throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary of " +
                            std::to_string(vocab_size) + " tokens");
  }
}

}  // namespace detail

// Builds the facade around an implementation, for the loaders in src/.
class TokenizerFactory {
 public:
  static Tokenizer make(std::unique_ptr<detail::TokenizerImpl> impl) {
    return Tokenizer(std::move(impl));
  }
};

}  // namespace quire::engine
