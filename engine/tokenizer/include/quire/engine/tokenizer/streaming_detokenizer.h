#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

// Turns the token ids of a reply into text as they arrive. The pieces it
// returns, followed by flush(), are byte for byte what Tokenizer::decode()
// gives for the whole sequence: the first word loses its "▁" exactly when
// decode() would drop it, control tokens add nothing, and a character spelled
// with byte-fallback pieces (<0xE2><0x82><0xAC>) comes out only once its last
// byte is there, so no push ever ends in half a UTF-8 character.
//
// Each push decodes only a few tokens: the bytes still waiting for the rest of
// their character and the new token (until the reply's first visible text,
// everything since its start). The tokenizer must outlive the detokenizer and
// stay where it is (not be moved from). Not thread-safe; one per stream.
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& tokenizer);

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
  std::string decode_window(std::size_t count);
  std::size_t undecided_tail() const;

  const Tokenizer* tokenizer_;
  // A plain piece decoded in front of the window once the reply has produced
  // text. It puts SentencePiece's decoder in the state it has in the middle of
  // a sequence (it drops the "▁" only at the start) and ends any run of byte
  // pieces, so the window decodes exactly as it would at its real position.
  std::optional<std::int32_t> anchor_;
  std::size_t anchor_text_size_ = 0;
  bool anchored_ = false;  // the window no longer starts at the sequence's start
  std::vector<std::int32_t> window_;
  std::size_t emitted_ = 0;  // bytes of the window's text already returned
  std::vector<std::int32_t> scratch_;
};

}  // namespace quire::engine
