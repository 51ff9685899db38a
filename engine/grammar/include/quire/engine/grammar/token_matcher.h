#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "quire/engine/grammar/grammar.h"
#include "quire/engine/grammar/token_vocabulary.h"

namespace quire::engine::grammar {

class MatcherState;

// Constrains one generated reply to a grammar, token by token. Made per
// request from a compiled Grammar and the model's TokenVocabulary, both
// shared and immutable; the matcher itself is not thread-safe (one per
// sequence, used from the thread that samples it).
//
// At each step the sampler asks for allowed_tokens(), masks the logits with
// it, samples, and reports the token with accept():
//
//   TokenMatcher matcher(grammar, vocabulary);
//   std::vector<std::uint32_t> mask(matcher.mask_words());
//   while (!matcher.is_finished()) {
//     matcher.allowed_tokens(mask);          // bit id % 32 of word id / 32
//     const std::int32_t token = sample(logits, mask);
//     matcher.accept(token);                 // true: the mask allowed it
//   }
//
// A token is allowed when all its bytes keep the text inside the grammar,
// however many grammar symbols they span ("}]," or '", "'); the mask comes
// from walking the vocabulary trie through the grammar's states, skipping a
// whole subtree at the first byte the grammar rejects. The end-of-sequence
// ids are allowed exactly when the text so far is complete. Every state a
// matcher can reach can still be completed, so generation never dead-ends.
// Masks are memoized per grammar state within the matcher: a state the
// reply comes back to (inside a string, between array items) costs a copy.
// Inside strings, the tokens that are plain string content are taken by
// length from the vocabulary's precomputed masks and only the others are
// walked. A server that sees the same schema often can keep a matcher per
// schema and reset() it between replies, so that later replies start warm.
// allowed_tokens() may run on another thread while the model computes the
// step's logits, as long as one thread at a time uses the matcher.
class TokenMatcher {
 public:
  TokenMatcher(std::shared_ptr<const Grammar> grammar,
               std::shared_ptr<const TokenVocabulary> vocabulary);
  TokenMatcher(TokenMatcher&&) noexcept;
  TokenMatcher& operator=(TokenMatcher&&) noexcept;
  ~TokenMatcher();

  // Words of the mask: ceil(vocabulary size / 32).
  std::size_t mask_words() const;
  // Writes the allowed ids into `mask` (mask_words() words; bit id % 32 of
  // word id / 32 set when allowed). Nothing is allowed once finished.
  // Throws std::invalid_argument for a mask of another size.
  void allowed_tokens(std::span<std::uint32_t> mask);
  // Advances by the token. Returns false, changing nothing, when the token is
  // not allowed here (its bytes leave the grammar, it has no bytes, or it is
  // end-of-sequence before the text is complete); end-of-sequence when the
  // text is complete finishes the matcher.
  bool accept(std::int32_t token);
  // Advances by raw bytes, as if a token had spelled them: text forced into
  // the reply, or a test driving the grammar. All or nothing, like accept().
  bool accept_bytes(std::string_view bytes);
  // Whether accept_bytes(bytes) would succeed, without advancing: what a
  // token-by-token reference checks the mask against, and a way to test a
  // continuation before forcing it.
  bool allows_bytes(std::string_view bytes);
  // Whether the text so far is a whole text of the grammar (end-of-sequence
  // is allowed now).
  bool is_accepting() const;
  // Whether end-of-sequence was accepted.
  bool is_finished() const;
  // Back to the start, for a new reply under the same grammar; memoized
  // states and masks are kept.
  void reset();

 private:
  std::unique_ptr<MatcherState> state_;
};

}  // namespace quire::engine::grammar
