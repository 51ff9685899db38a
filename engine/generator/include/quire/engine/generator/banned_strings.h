#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine {

// Text a reply must never show (JobRequest::banned_strings), matched without
// regard to case across token boundaries, as exllamav2 matches it.
//
// The guard sits between the detokenizer and the stop matcher. Text that
// could be the beginning of a banned string is held back, with the reply
// index of the token it came from, until the following text decides it. When
// a banned string appears, the guard names the token its first character came
// from: the generator rewinds the reply to just before that token and draws
// that position again with the token banned there. So nothing banned is ever
// streamed, and nothing held back needs taking back.
//
// A piece is the text one token completed (a StreamingDetokenizer's push):
// whole UTF-8 characters, possibly empty when the token holds only part of a
// character. A match is traced to the first token that contributed a byte to
// its piece: rewinding to the token that completed a character would keep
// the bytes of its beginning. Case is folded per piece with Unicode's full
// lowercase mapping. One guard per job; not thread-safe.
class BannedStringGuard {
 public:
  // Empty and repeated strings are ignored. Throws std::invalid_argument for
  // a string that is not valid UTF-8.
  explicit BannedStringGuard(std::vector<std::string> banned);

  bool empty() const { return banned_.empty(); }
  const std::vector<std::string>& banned() const { return banned_; }

  // Where a banned string would begin if the token at reply index `index`,
  // whose text is `piece`, were accepted: the reply index of the token its
  // first character came from (at most `index`), or nullopt. Changes nothing.
  std::optional<int> match_if_fed(int index, std::string_view piece) const;

  // Accepts the token at reply index `index` with its text, after
  // match_if_fed found nothing: returns the text now known to start no
  // banned string, possibly empty.
  std::string feed(int index, std::string_view piece);

  // Takes the reply back to before the token at reply index `index`: held
  // text from it on is dropped. Text already returned is never at or after
  // a match, so it stays.
  void rewind(int index);

  // Everything held back: no banned string can complete any more (a stop
  // token ended the reply).
  std::string release();

  // Ends the reply: the held text and `trailing_text` (the detokenizer's
  // last bytes), cut before a banned string should one complete there,
  // where no token is left to rewind.
  std::string finish(std::string_view trailing_text);

  // The text held back, for tests.
  std::string held() const;

 private:
  struct Piece {
    int index = 0;       // reply index of the first token that contributed to it
    std::string text;    // as the detokenizer gave it
    std::string folded;  // lowercased
  };
  // The earliest match in the held pieces followed by `extra`, as the
  // position in the folded text; nullopt when none.
  std::optional<std::size_t> first_match(std::string_view extra_folded) const;
  // The held piece (or -1 for `extra`) at a position of the folded text.
  int piece_at(std::size_t position) const;
  // How many of the last held pieces may still begin a banned string.
  std::size_t undecided_pieces() const;

  std::vector<std::string> banned_;  // folded
  std::vector<Piece> held_;
  // Reply index of the first token since the last non-empty piece: a piece
  // that completes a character started by earlier tokens belongs to them.
  std::optional<int> started_;
};

}  // namespace quire::engine
