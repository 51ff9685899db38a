#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace quire::engine::detail {

// A pattern from tokenizer.json compiled with PCRE2 (UTF and Unicode
// properties, JIT where available). Hugging Face compiles these patterns with
// Oniguruma; the few places where the two engines read a pattern differently
// are rewritten before compiling (see regex.cpp). Matching is safe from
// several threads at once. Texts must be valid UTF-8.
class Regex {
 public:
  // Throws RegexError with PCRE2's message and the offset it points at.
  static Regex compile(std::string_view pattern);
  // A pattern that matches `literal` exactly.
  static Regex literal(std::string_view literal);

  // Calls on_match(begin, end) for every non-overlapping match, left to
  // right; after an empty match the search moves on by one character.
  template <typename OnMatch>
  void for_each_match(std::string_view text, OnMatch&& on_match) const {
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t begin = 0;
      std::size_t end = 0;
      if (!find(text, start, begin, end)) break;
      on_match(begin, end);
      if (end > begin) {
        start = end;
      } else {
        if (end >= text.size()) break;
        start = end + 1;
        while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
          ++start;
      }
    }
  }

  std::string replace_all(std::string_view text, std::string_view replacement) const;

 private:
  struct Code;
  bool find(std::string_view text, std::size_t start, std::size_t& begin, std::size_t& end) const;
  std::shared_ptr<const Code> code_;
};

class RegexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace quire::engine::detail
