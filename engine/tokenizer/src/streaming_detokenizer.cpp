#include "quire/engine/tokenizer/streaming_detokenizer.h"

#include <algorithm>
#include <array>
#include <span>

namespace quire::engine {
namespace {

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

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {
  // Any ordinary piece whose text survives decoding on its own will do.
  for (std::int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (tokenizer.kind(id) != PieceKind::Normal) continue;
    const std::array<std::int32_t, 1> alone{id};
    const std::string text = tokenizer.decode(alone);
    if (text.empty()) continue;
    anchor_ = id;
    anchor_text_size_ = text.size();
    break;
  }
}

std::string StreamingDetokenizer::push(std::int32_t token) {
  const PieceKind kind = tokenizer_->kind(token);  // validates the id before anything changes
  window_.push_back(token);
  const std::size_t held = undecided_tail();
  const std::string text = decode_window(window_.size() - held);
  // Decoding more tokens only ever appends: everything before the held bytes
  // is final (see undecided_tail).
  std::string fresh = text.substr(emitted_);
  emitted_ = text.size();

  if ((anchored_ || !text.empty()) && anchor_) {
    // Everything before the held bytes is final and the text so far is not
    // empty, so from here on the decoder keeps every "▁" as a space. The
    // window restarts at the held bytes, which begin at a character boundary
    // of their byte run; the anchor in front of them ends any earlier run and
    // makes the output non-empty, so they decode as they would in place.
    window_.erase(window_.begin(), window_.end() - static_cast<std::ptrdiff_t>(held));
    emitted_ = 0;
    anchored_ = true;
  } else if (!anchored_ && kind == PieceKind::Control &&
             std::all_of(window_.begin(), window_.end(),
                         [&](std::int32_t id) { return tokenizer_->is_control(id); })) {
    // Control pieces at the very start leave the decoder as it began.
    window_.clear();
  }
  return fresh;
}

std::string StreamingDetokenizer::flush() {
  std::string rest = decode_window(window_.size()).substr(emitted_);
  reset();
  return rest;
}

void StreamingDetokenizer::reset() {
  window_.clear();
  emitted_ = 0;
  anchored_ = false;
}

std::string StreamingDetokenizer::decode_window(std::size_t count) {
  const std::span<const std::int32_t> tokens = std::span(window_).first(count);
  if (!anchored_) return tokenizer_->decode(tokens);
  scratch_.assign(1, *anchor_);
  scratch_.insert(scratch_.end(), tokens.begin(), tokens.end());
  return tokenizer_->decode(scratch_).substr(anchor_text_size_);
}

// SentencePiece joins a run of byte pieces and reads it greedily, one
// character at a time from the run's start (or from a character boundary,
// where the window is cut). A character is decided once all the bytes its lead
// byte announces are there; from the first undecided one on, the bytes wait.
std::size_t StreamingDetokenizer::undecided_tail() const {
  std::size_t start = window_.size();
  while (start > 0 && tokenizer_->kind(window_[start - 1]) == PieceKind::Byte)
    --start;
  auto byte_at = [&](std::size_t index) { return *tokenizer_->byte_value(window_[index]); };
  std::size_t offset = start;
  while (offset < window_.size()) {
    const std::size_t length = announced_length(byte_at(offset));
    if (offset + length > window_.size()) return window_.size() - offset;
    // Only where the next character starts matters here. With all its
    // continuation bytes in place a sequence ends at offset + length, whether
    // it decodes to one character or, being overlong or a surrogate, to one
    // U+FFFD per byte. Otherwise the lead byte alone becomes U+FFFD.
    bool continued = true;
    for (std::size_t i = 1; i < length; ++i)
      continued = continued && is_continuation(byte_at(offset + i));
    offset += continued ? length : 1;
  }
  return 0;
}

}  // namespace quire::engine
