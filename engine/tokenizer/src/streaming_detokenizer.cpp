#include "quire/engine/tokenizer/streaming_detokenizer.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "tokenizer_impl.h"

namespace quire::engine {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// The context keeps at least this many tokens that are not control tokens,
// so that it decodes to text and start-of-text rules (a dropped "▁", a
// stripped space) apply to it rather than to the window.
constexpr std::size_t kContextTokens = 3;

// What transformers' clean_up_tokenization removes a space in front of.
constexpr std::array<std::string_view, 10> kCleanedUp = {" .",   " ?",  " !",  " ,",   " ' ",
                                                         " n't", " 'm", " 's", " 've", " 're"};

// How many bytes a UTF-8 sequence starting with `lead` takes, read the way
// SentencePiece's decoder reads it. A byte that cannot start a sequence
// (ASCII, a continuation byte, 0xF8 and above) stands alone.
std::size_t announced_length(std::uint8_t lead) {
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

bool is_continuation(std::uint8_t byte) {
  return (byte & 0xC0) == 0x80;
}

}  // namespace

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(&tokenizer),
      skip_special_(skip_special),
      cleans_up_spaces_(tokenizer.impl_->special.clean_up_spaces),
      sentencepiece_byte_runs_(tokenizer.impl_->sentencepiece_byte_runs()) {}

std::string StreamingDetokenizer::push(std::int32_t token) {
  tokenizer_->kind(token);  // validates the id before anything changes
  window_.push_back(token);
  // SentencePiece: byte pieces of an unfinished character are not decoded
  // yet. Otherwise the decoded text says what is unfinished.
  const std::size_t held = sentencepiece_byte_runs_ ? undecided_byte_pieces() : 0;
  const std::string text = window_text(window_.size() - held);
  const std::size_t settled = held > 0 ? text.size() : settled_length(text);
  std::string fresh;
  if (settled > emitted_) {
    fresh = text.substr(emitted_, settled - emitted_);
    emitted_ = settled;
  }
  if (settled == text.size()) {
    const std::vector<std::int32_t> undecided(window_.end() - static_cast<std::ptrdiff_t>(held),
                                              window_.end());
    window_.resize(window_.size() - held);
    move_window_to_context();
    window_ = undecided;
  }
  return fresh;
}

// SentencePiece joins a run of byte pieces and reads it greedily, one
// character at a time from the run's start (or from a character boundary,
// where the context ends). A character is decided once all the bytes its lead
// byte announces are there; from the first undecided one on, the pieces wait.
std::size_t StreamingDetokenizer::undecided_byte_pieces() const {
  std::size_t start = window_.size();
  while (start > 0 && tokenizer_->kind(window_[start - 1]) == PieceKind::Byte)
    --start;
  auto byte_at = [&](std::size_t index) { return *tokenizer_->byte_value(window_[index]); };
  std::size_t offset = start;
  while (offset < window_.size()) {
    const std::size_t length = announced_length(byte_at(offset));
    if (offset + length > window_.size()) return window_.size() - offset;
    // With all its continuation bytes in place a sequence ends at offset +
    // length, whether it decodes to one character or, being overlong or a
    // surrogate, to one U+FFFD per byte. Otherwise the lead byte alone
    // becomes U+FFFD.
    bool continued = true;
    for (std::size_t i = 1; i < length; ++i)
      continued = continued && is_continuation(byte_at(offset + i));
    offset += continued ? length : 1;
  }
  return 0;
}

std::string StreamingDetokenizer::decode(const std::vector<std::int32_t>& ids) const {
  return tokenizer_->decode(ids, skip_special_);
}

std::string StreamingDetokenizer::flush() {
  const std::string text = window_text(window_.size());
  std::string rest = text.size() > emitted_ ? text.substr(emitted_) : std::string();
  reset();
  return rest;
}

void StreamingDetokenizer::reset() {
  context_.clear();
  context_text_.clear();
  window_.clear();
  emitted_ = 0;
}

std::string StreamingDetokenizer::window_text(std::size_t count) {
  scratch_.assign(context_.begin(), context_.end());
  scratch_.insert(scratch_.end(), window_.begin(),
                  window_.begin() + static_cast<std::ptrdiff_t>(count));
  std::string text = decode(scratch_);
  // The context's text is final, so decoding more after it only appends.
  if (text.starts_with(context_text_)) return text.substr(context_text_.size());
  return text.substr(std::min(text.size(), context_text_.size()));
}

// How much of the window's text no later token can change.
std::size_t StreamingDetokenizer::settled_length(const std::string& text) const {
  std::size_t end = text.size();
  // An unfinished character decodes as U+FFFD until its last byte comes.
  while (!sentencepiece_byte_runs_ && end >= kReplacement.size() &&
         std::string_view(text).substr(end - kReplacement.size()) == kReplacement) {
    end -= kReplacement.size();
  }
  if (cleans_up_spaces_) {
    // A space that a following "." or "'s" would remove waits for it.
    const std::size_t from = end > 4 ? end - 4 : 0;
    for (std::size_t space = from; space < end; ++space) {
      if (text[space] != ' ') continue;
      const std::string_view tail = std::string_view(text).substr(space, end - space);
      if (std::any_of(kCleanedUp.begin(), kCleanedUp.end(),
                      [&](std::string_view rule) { return rule.starts_with(tail); })) {
        end = space;
        break;
      }
    }
  }
  return end;
}

void StreamingDetokenizer::move_window_to_context() {
  context_.insert(context_.end(), window_.begin(), window_.end());
  window_.clear();
  emitted_ = 0;
  std::size_t keep = 0;
  std::size_t plain = 0;
  while (keep < context_.size() && plain < kContextTokens) {
    if (!tokenizer_->is_control(context_[context_.size() - 1 - keep])) ++plain;
    ++keep;
  }
  context_.erase(context_.begin(), context_.end() - static_cast<std::ptrdiff_t>(keep));
  context_text_ = decode(context_);
}

}  // namespace quire::engine
