#include "quire/remote/sse_decoder.h"

#include <stdexcept>
#include <string>

namespace quire::remote {

std::vector<SseEvent> SseDecoder::feed(std::string_view bytes) {
  std::vector<SseEvent> events;
  if (!started_) {
    // The byte order mark is dropped once, at the very start; its bytes are
    // held until the stream shows whether they are one.
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    while (!bytes.empty() && head_.size() < kBom.size() && bytes.front() == kBom[head_.size()]) {
      head_.push_back(bytes.front());
      bytes.remove_prefix(1);
    }
    if (head_.size() == kBom.size()) {
      head_.clear();
      started_ = true;
    } else if (!bytes.empty()) {
      started_ = true;
      const std::string held = std::move(head_);
      head_.clear();
      scan(held, events);
    } else {
      return events;
    }
  }
  scan(bytes, events);
  return events;
}

void SseDecoder::scan(std::string_view bytes, std::vector<SseEvent>& events) {
  for (const char c : bytes) {
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the LF of a CRLF
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      take_line(line_, events);
      line_.clear();
      continue;
    }
    if (line_.size() >= kMaxLine) {
      throw std::length_error("an event-stream line is longer than " + std::to_string(kMaxLine) +
                              " bytes");
    }
    line_.push_back(c);
  }
}

bool SseDecoder::finish() {
  const bool unfinished = !line_.empty() || !head_.empty() || has_data_;
  line_.clear();
  head_.clear();
  event_ = SseEvent{};
  has_data_ = false;
  return unfinished;
}

void SseDecoder::take_line(std::string_view line, std::vector<SseEvent>& events) {
  if (line.empty()) {
    if (has_data_) {
      event_.id = last_id_;
      events.push_back(std::move(event_));
    }
    event_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (line.front() == ':') {
    ++comments_;
    return;
  }
  std::string_view field = line;
  std::string_view value;
  if (const std::size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.type = value.empty() ? "message" : std::string(value);
  } else if (field == "id") {
    // An id holding NUL is ignored, as the standard says.
    if (value.find('\0') == std::string_view::npos) last_id_ = std::string(value);
  }
  // "retry" and unknown fields are ignored: the client does not reconnect.
}

}  // namespace quire::remote
