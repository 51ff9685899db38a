#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine {

// Why a job ended. The StopMatcher reports the first three; the generator
// decides the others.
enum class StopReason { Eos, StopToken, StopString, MaxNewTokens, Cancelled, Error };

// "eos", "stop_token", "stop_string", "max_new_tokens", "cancelled", "error".
std::string_view to_string(StopReason reason);

// Decides, token by token, what of a reply may be shown and when it ends.
//
// Stop strings are matched across token boundaries: text that could be the
// beginning of a stop string is held back until the following text decides
// it. When one appears, the text before it is released and nothing from it
// on; if several have appeared, the one that starts first wins (the longest
// of those starting there). A stop token ends the reply without its own text.
//
// Text comes in as the pieces a StreamingDetokenizer returns, which end on
// whole UTF-8 characters; what comes out does too, since a stop string (valid
// UTF-8 itself) can only match at a character's first byte. One matcher per
// job; not thread-safe.
class StopMatcher {
 public:
  // The released text is not called "emit": Qt defines that word as a macro,
  // and the application includes this header.
  struct Step {
    std::string text;                // text to show now, possibly empty
    std::optional<StopReason> stop;  // set when the reply ends with this token
    std::string stop_string;         // the stop string that matched, for StopString
  };

  // Empty and repeated stop strings are ignored. A token in both lists counts
  // as EOS. Throws std::invalid_argument for a stop string that is not valid
  // UTF-8.
  StopMatcher(std::vector<std::string> stop_strings, std::vector<std::int32_t> stop_tokens,
              std::vector<std::int32_t> eos_tokens = {});

  bool is_stop_token(std::int32_t token) const;

  // `text_piece` is what the detokenizer returned for `token` (ignored for a
  // stop token). On a stop token, text held back so far is released: no stop
  // string can complete any more. After the reply has ended, feed() returns
  // nothing new and repeats the reason.
  Step feed(std::int32_t token, std::string_view text_piece);
  // feed() for text that comes with no token of its own: what banned
  // strings held back, released by a later token.
  Step feed_text(std::string_view text);

  // Ends the reply: returns the held-back text that turned out not to start a
  // stop string, followed by `trailing_text` (what the detokenizer's flush()
  // still had), cut before a stop string should one complete there. Returns
  // nothing once a stop string has matched. The matcher is then spent.
  std::string finish(std::string_view trailing_text = {});

  // The text held back, for tests and diagnostics.
  const std::string& held() const { return held_; }
  bool stopped() const { return stop_.has_value(); }
  const std::vector<std::string>& stop_strings() const { return stop_strings_; }

 private:
  struct Match {
    std::size_t position;
    std::size_t string_index;
  };
  std::optional<Match> first_match_in(std::string_view text) const;
  bool contains_string(const std::string& text) const;
  std::size_t undecided_suffix() const;

  std::vector<std::string> stop_strings_;
  std::vector<std::int32_t> stop_tokens_;
  std::vector<std::int32_t> eos_tokens_;
  std::string held_;
  std::optional<StopReason> stop_;
  std::string matched_;
};

}  // namespace quire::engine
