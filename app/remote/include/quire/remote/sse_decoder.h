#pragma once

// Server-sent events as the WHATWG HTML standard defines the stream format:
// bytes arrive in pieces of any size, lines end with LF, CRLF or CR, a blank
// line dispatches the event, "data:" lines are joined with LF, a line that
// starts with ":" is a comment (servers send them to keep a connection
// alive), and the UTF-8 byte order mark may open the stream. No Qt: the fuzz
// build links this too.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace quire::remote {

struct SseEvent {
  std::string type = "message";  // the "event:" field, "message" when absent
  std::string data;              // the "data:" lines joined with "\n"
  std::string id;                // the last "id:" field seen
};

class SseDecoder {
 public:
  // A line longer than this (a server that never ends one) is an error
  // rather than a buffer that grows without bound.
  static constexpr std::size_t kMaxLine = 8 * 1024 * 1024;

  // Feeds the next bytes; returns the events they complete, in order.
  // Throws std::length_error when a line outgrows kMaxLine.
  std::vector<SseEvent> feed(std::string_view bytes);
  // The stream ended: an event whose blank line never came is dropped, as
  // the standard says; returns whether anything was left unfinished.
  bool finish();
  // Comments seen so far (keep-alives), for tests and statistics.
  std::size_t comments() const { return comments_; }

 private:
  void scan(std::string_view bytes, std::vector<SseEvent>& events);
  void take_line(std::string_view line, std::vector<SseEvent>& events);

  std::string head_;  // the stream's first bytes while they may be a byte order mark
  std::string line_;
  bool after_cr_ = false;
  bool started_ = false;
  bool has_data_ = false;
  std::size_t comments_ = 0;
  SseEvent event_;
  std::string last_id_;
};

}  // namespace quire::remote
