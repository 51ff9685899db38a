#include "quire/engine/generator/banned_strings.h"

#include <algorithm>
#include <stdexcept>

#include "quire/engine/tokenizer/text_case.h"

namespace quire::engine {
namespace {

// Structure only: a lead byte, then as many continuation bytes as it says.
bool banned_string_is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80                             ? 1
                               : (lead & 0xE0) == 0xC0 && lead >= 0xC2 ? 2
                               : (lead & 0xF0) == 0xE0                 ? 3
                               : (lead & 0xF8) == 0xF0 && lead <= 0xF4 ? 4
                                                                       : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (std::size_t j = 1; j < length; ++j) {
      if ((static_cast<unsigned char>(text[i + j]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace

BannedStringGuard::BannedStringGuard(std::vector<std::string> banned) {
  for (const std::string& text : banned) {
    if (text.empty()) continue;
    if (!banned_string_is_utf8(text)) {
      throw std::invalid_argument("a banned string is not valid UTF-8 (" +
                                  std::to_string(text.size()) + " bytes)");
    }
    std::string folded = lowercase_text(text);
    if (std::find(banned_.begin(), banned_.end(), folded) == banned_.end())
      banned_.push_back(std::move(folded));
  }
}

std::optional<std::size_t> BannedStringGuard::first_match(std::string_view extra_folded) const {
  std::string text;
  for (const Piece& piece : held_)
    text += piece.folded;
  text += extra_folded;
  std::optional<std::size_t> first;
  for (const std::string& banned : banned_) {
    const std::size_t position = text.find(banned);
    if (position != std::string::npos && (!first || position < *first)) first = position;
  }
  return first;
}

int BannedStringGuard::piece_at(std::size_t position) const {
  std::size_t end = 0;
  for (std::size_t i = 0; i < held_.size(); ++i) {
    end += held_[i].folded.size();
    if (position < end) return static_cast<int>(i);
  }
  return -1;
}

std::optional<int> BannedStringGuard::match_if_fed(int index, std::string_view piece) const {
  if (banned_.empty() || piece.empty()) return std::nullopt;
  const std::optional<std::size_t> match = first_match(lowercase_text(piece));
  if (!match) return std::nullopt;
  const int held = piece_at(*match);
  if (held >= 0) return held_[static_cast<std::size_t>(held)].index;
  return started_.value_or(index);
}

std::size_t BannedStringGuard::undecided_pieces() const {
  std::string text;
  for (const Piece& piece : held_)
    text += piece.folded;
  // The longest end of the text that begins a banned string.
  std::size_t longest = 0;
  for (const std::string& banned : banned_) {
    const std::size_t most = std::min(text.size(), banned.size() - 1);
    for (std::size_t length = most; length > longest; --length) {
      if (std::string_view(text).substr(text.size() - length) ==
          std::string_view(banned).substr(0, length)) {
        longest = length;
        break;
      }
    }
  }
  if (longest == 0) return 0;
  const int first = piece_at(text.size() - longest);
  return held_.size() - static_cast<std::size_t>(first);
}

std::string BannedStringGuard::feed(int index, std::string_view piece) {
  if (banned_.empty()) return std::string(piece);
  if (piece.empty()) {
    if (!started_) started_ = index;
    return {};
  }
  held_.push_back({started_.value_or(index), std::string(piece), lowercase_text(piece)});
  started_.reset();
  const std::size_t keep = undecided_pieces();
  std::string decided;
  for (std::size_t i = 0; i + keep < held_.size(); ++i)
    decided += held_[i].text;
  held_.erase(held_.begin(), held_.end() - static_cast<std::ptrdiff_t>(keep));
  return decided;
}

void BannedStringGuard::rewind(int index) {
  std::erase_if(held_, [index](const Piece& piece) { return piece.index >= index; });
  if (started_ && *started_ >= index) started_.reset();
}

std::string BannedStringGuard::release() {
  std::string text;
  for (const Piece& piece : held_)
    text += piece.text;
  held_.clear();
  started_.reset();
  return text;
}

std::string BannedStringGuard::finish(std::string_view trailing_text) {
  if (banned_.empty()) return release() + std::string(trailing_text);
  if (!trailing_text.empty()) {
    held_.push_back(
        {started_.value_or(0), std::string(trailing_text), lowercase_text(trailing_text)});
  }
  const std::optional<std::size_t> match = first_match({});
  if (!match) return release();
  // No token is left to draw again: the reply ends before the match. Where
  // folding kept a piece's length its bytes line up and the cut is exact;
  // otherwise it falls at the start of the piece the match begins in.
  const auto piece = static_cast<std::size_t>(piece_at(*match));
  std::size_t start = 0;
  for (std::size_t i = 0; i < piece; ++i)
    start += held_[i].folded.size();
  std::string kept_part;
  if (held_[piece].text.size() == held_[piece].folded.size())
    kept_part = held_[piece].text.substr(0, *match - start);
  held_.resize(piece);
  return release() + kept_part;
}

std::string BannedStringGuard::held() const {
  std::string text;
  for (const Piece& piece : held_)
    text += piece.text;
  return text;
}

}  // namespace quire::engine
