#pragma once

// Text with provenance: the bytes of a string and the byte ranges in it that
// are "literal", that is, copied from caller data marked literal (the contents
// of chat messages). A chat renderer must never let literal bytes become
// control tokens, so every operation that moves text keeps the ranges with it.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine::jinja {

// Half-open byte range [begin, end).
struct TextRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  friend bool operator==(const TextRange&, const TextRange&) = default;
};

class Text {
 public:
  Text() = default;
  // All of `bytes` is literal when `literal` is true, none of it otherwise.
  explicit Text(std::string bytes, bool literal = false);

  const std::string& bytes() const { return bytes_; }
  // Sorted, non-overlapping, non-adjacent ranges.
  const std::vector<TextRange>& literal() const { return literal_; }
  bool any_literal() const { return !literal_.empty(); }
  bool empty() const { return bytes_.empty(); }
  std::size_t size() const { return bytes_.size(); }

  void append(const Text& other);
  void append(std::string_view bytes, bool literal = false);
  void reserve(std::size_t bytes) { bytes_.reserve(bytes); }

  // Bytes [begin, end) with the ranges that fall inside them.
  Text slice(std::size_t begin, std::size_t end) const;
  // Whether byte `index` lies in a literal range.
  bool is_literal(std::size_t index) const;
  // Whether any byte of [begin, end) lies in a literal range.
  bool any_literal_in(std::size_t begin, std::size_t end) const;
  // The whole text marked literal when any of it was: the rule for text that
  // an operation rewrites rather than copies (upper, title, format...).
  Text all_literal_if_any() const;

 private:
  void mark(std::size_t begin, std::size_t end);

  std::string bytes_;
  std::vector<TextRange> literal_;
};

}  // namespace quire::engine::jinja
