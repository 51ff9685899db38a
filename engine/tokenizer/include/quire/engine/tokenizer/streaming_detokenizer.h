#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// Turns the token ids of a reply into text as they arrive. The pieces it
// returns, followed by flush(), are byte for byte what Tokenizer::decode()
// gives for the whole sequence (special tokens skipped), for either kind of
// tokenizer: the first word loses its "▁" exactly when decode() would drop
// it, control tokens add nothing, and a character split across tokens (byte
// pieces <0xE2><0x82><0xAC>, or byte-level tokens that each carry part of
// it) comes out only once it is whole, so no push ever ends in half a UTF-8
// character.
//
// Each push decodes only a few tokens: a little context that is already out,
// the tokens whose text is still undecided and the new one. Text is held back
// while it ends in what more tokens could still change: an unfinished
// character (decoded as U+FFFD) or, for tokenizers that remove the space
// before punctuation when decoding, a space that may yet be removed. The
// tokenizer must outlive the detokenizer and stay where it is (not be moved
// from). Not thread-safe; one per stream.
class StreamingDetokenizer {
 public:
  // `skip_special`: special tokens add nothing, as in decode(ids); false
  // spells them out, as decode(ids, false) does (tool-call markers such as
  // <|python_tag|> and [TOOL_CALLS] are special tokens).
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special = true);

  // The text that `token` completes; often empty (a control token, or a byte
  // in the middle of a character). Throws std::out_of_range for an id outside
  // the vocabulary, leaving the stream as it was.
  std::string push(std::int32_t token);

  // Ends the sequence: returns what is still held back (bytes of a character
  // that never completed, as the U+FFFD that decode() shows for them) and
  // starts a new sequence.
  std::string flush();

  // Drops everything held back and starts a new sequence.
  void reset();

 private:
  std::string window_text(std::size_t count);
  std::size_t settled_length(const std::string& text) const;
  std::size_t undecided_byte_pieces() const;
  void move_window_to_context();

  std::string decode(const std::vector<std::int32_t>& ids) const;

  const Tokenizer* tokenizer_;
  bool skip_special_ = true;
  bool cleans_up_spaces_ = false;
  bool sentencepiece_byte_runs_ = false;
  // Tokens whose text is out, decoded in front of the window so that the
  // decoder is in the state it has at the window's real position.
  std::vector<std::int32_t> context_;
  std::string context_text_;
  std::vector<std::int32_t> window_;  // tokens whose text is not all out
  std::size_t emitted_ = 0;           // bytes of the window's text already returned
  std::vector<std::int32_t> scratch_;
};

}  // namespace quire::engine
