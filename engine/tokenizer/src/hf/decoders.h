#pragma once

#include <memory>
#include <string>
#include <vector>

#include "json_field.h"

namespace quire::engine::detail {

// A token on its way back to text; `added` marks added tokens, which the
// byte-level decoder passes through as the text they are.
struct DecodedPiece {
  std::string text;
  bool added = false;
};
using DecodedPieces = std::vector<DecodedPiece>;

// tokenizer.json's "decoder": a chain of steps over the tokens' texts, whose
// results are joined.
class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(DecodedPieces& pieces) const = 0;
  // Rewrites one token's text into the bytes it adds in the middle of a
  // decoded sequence, before any repair of broken UTF-8: what a grammar
  // matches token by token. `added` marks an added token, as in
  // DecodedPiece. Steps that act only at the edges of the whole text (Strip
  // after Fuse, the first token's space) leave it as it is.
  virtual void token_bytes(std::string& text, bool added) const { (void)text, (void)added; }
};

// nullptr for a null decoder (Hugging Face then joins the tokens with
// spaces). Throws ModelError for an unknown type.
std::unique_ptr<Decoder> read_decoder(const JsonField& config);

}  // namespace quire::engine::detail
