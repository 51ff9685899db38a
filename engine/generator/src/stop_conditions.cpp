#include "quire/engine/generator/stop_conditions.h"

#include <algorithm>
#include <stdexcept>

namespace quire::engine {
namespace {

bool is_continuation(char byte) {
  return (static_cast<unsigned char>(byte) & 0xC0) == 0x80;
}

// Structure only (lead byte, then the right number of continuation bytes):
// enough to know that a match starts on a character's first byte.
bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    if (lead < 0x80)
      length = 1;
    else if ((lead & 0xE0) == 0xC0 && lead >= 0xC2)
      length = 2;
    else if ((lead & 0xF0) == 0xE0)
      length = 3;
    else if ((lead & 0xF8) == 0xF0 && lead <= 0xF4)
      length = 4;
    else
      return false;
    if (i + length > text.size()) return false;
    for (std::size_t j = 1; j < length; ++j) {
      if (!is_continuation(text[i + j])) return false;
    }
    i += length;
  }
  return true;
}

// Whole pieces and a valid stop string never put a cut inside a character;
// this keeps it so for any input: a cut inside a character moves to its
// start, and a cut at the end moves before an incomplete last character.
std::size_t character_boundary(std::string_view text, std::size_t cut) {
  while (cut > 0 && cut < text.size() && is_continuation(text[cut]))
    --cut;
  if (cut != text.size() || cut == 0) return cut;
  std::size_t lead = cut - 1;
  while (lead > 0 && cut - lead < 4 && is_continuation(text[lead]))
    --lead;
  const auto byte = static_cast<unsigned char>(text[lead]);
  const std::size_t length = (byte & 0xE0) == 0xC0   ? 2
                             : (byte & 0xF0) == 0xE0 ? 3
                             : (byte & 0xF8) == 0xF0 ? 4
                                                     : 1;
  return cut - lead < length ? lead : cut;
}

bool contains(const std::vector<std::int32_t>& ids, std::int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::Eos:
      return "eos";
    case StopReason::StopToken:
      return "stop_token";
    case StopReason::StopString:
      return "stop_string";
    case StopReason::MaxNewTokens:
      return "max_new_tokens";
    case StopReason::Cancelled:
      return "cancelled";
    case StopReason::Error:
      return "error";
  }
  return "unknown";
}

StopMatcher::StopMatcher(std::vector<std::string> stop_strings,
                         std::vector<std::int32_t> stop_tokens,
                         std::vector<std::int32_t> eos_tokens)
    : stop_tokens_(std::move(stop_tokens)), eos_tokens_(std::move(eos_tokens)) {
  for (std::string& text : stop_strings) {
    if (text.empty() || contains_string(text)) continue;
    if (!is_valid_utf8(text)) {
      throw std::invalid_argument("a stop string is not valid UTF-8 (" +
                                  std::to_string(text.size()) + " bytes)");
    }
    stop_strings_.push_back(std::move(text));
  }
}

bool StopMatcher::contains_string(const std::string& text) const {
  return std::find(stop_strings_.begin(), stop_strings_.end(), text) != stop_strings_.end();
}

bool StopMatcher::is_stop_token(std::int32_t token) const {
  return contains(eos_tokens_, token) || contains(stop_tokens_, token);
}

StopMatcher::Step StopMatcher::feed(std::int32_t token, std::string_view text_piece) {
  Step step;
  if (stop_) {
    step.stop = stop_;
    step.stop_string = matched_;
    return step;
  }
  if (is_stop_token(token)) {
    stop_ = contains(eos_tokens_, token) ? StopReason::Eos : StopReason::StopToken;
    step.stop = stop_;
    step.text = std::move(held_);
    held_.clear();
    return step;
  }
  return feed_text(text_piece);
}

StopMatcher::Step StopMatcher::feed_text(std::string_view text) {
  Step step;
  if (stop_) {
    step.stop = stop_;
    step.stop_string = matched_;
    return step;
  }
  held_.append(text);
  if (const auto match = first_match_in(held_)) {
    stop_ = StopReason::StopString;
    matched_ = stop_strings_[match->string_index];
    step.stop = stop_;
    step.stop_string = matched_;
    step.text = held_.substr(0, match->position);
    held_.clear();
    return step;
  }
  const std::size_t keep = undecided_suffix();
  step.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return step;
}

std::string StopMatcher::finish(std::string_view trailing_text) {
  if (stop_ == StopReason::StopString) return {};
  held_.append(trailing_text);
  std::string rest = std::move(held_);
  held_.clear();
  if (const auto match = first_match_in(rest)) {
    stop_ = StopReason::StopString;
    matched_ = stop_strings_[match->string_index];
    rest.resize(match->position);
  }
  return rest;
}

std::optional<StopMatcher::Match> StopMatcher::first_match_in(std::string_view text) const {
  std::optional<Match> best;
  for (std::size_t i = 0; i < stop_strings_.size(); ++i) {
    const std::size_t position = text.find(stop_strings_[i]);
    if (position == std::string_view::npos) continue;
    const bool earlier = !best || position < best->position;
    const bool longer_at_same_start =
        best && position == best->position &&
        stop_strings_[i].size() > stop_strings_[best->string_index].size();
    if (earlier || longer_at_same_start) best = Match{position, i};
  }
  return best;
}

// The longest end of the held text that is the beginning of a stop string.
// Every place a stop string could still start lies inside it, so the text
// before it is final.
std::size_t StopMatcher::undecided_suffix() const {
  const std::string_view held = held_;
  std::size_t longest = 0;
  for (const std::string& stop : stop_strings_) {
    const std::size_t most = std::min(held.size(), stop.size() - 1);
    for (std::size_t length = most; length > longest; --length) {
      if (held.substr(held.size() - length) == std::string_view(stop).substr(0, length)) {
        longest = length;
        break;
      }
    }
  }
  return held.size() - character_boundary(held, held.size() - longest);
}

}  // namespace quire::engine
