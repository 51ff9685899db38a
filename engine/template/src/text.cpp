#include "quire/engine/template/text.h"

#include <algorithm>

namespace quire::engine::jinja {

Text::Text(std::string bytes, bool literal) : bytes_(std::move(bytes)) {
  if (literal && !bytes_.empty()) literal_.push_back({0, bytes_.size()});
}

void Text::mark(std::size_t begin, std::size_t end) {
  if (begin >= end) return;
  if (!literal_.empty() && literal_.back().end >= begin) {
    literal_.back().end = std::max(literal_.back().end, end);
    return;
  }
  literal_.push_back({begin, end});
}

void Text::append(const Text& other) {
  const std::size_t offset = bytes_.size();
  bytes_ += other.bytes_;
  for (const TextRange& range : other.literal_)
    mark(range.begin + offset, range.end + offset);
}

void Text::append(std::string_view bytes, bool literal) {
  const std::size_t offset = bytes_.size();
  bytes_ += bytes;
  if (literal) mark(offset, bytes_.size());
}

Text Text::slice(std::size_t begin, std::size_t end) const {
  end = std::min(end, bytes_.size());
  begin = std::min(begin, end);
  Text result;
  result.bytes_ = bytes_.substr(begin, end - begin);
  for (const TextRange& range : literal_) {
    const std::size_t from = std::max(range.begin, begin);
    const std::size_t to = std::min(range.end, end);
    if (from < to) result.mark(from - begin, to - begin);
  }
  return result;
}

bool Text::is_literal(std::size_t index) const {
  return any_literal_in(index, index + 1);
}

bool Text::any_literal_in(std::size_t begin, std::size_t end) const {
  // First range whose end lies beyond `begin`.
  auto it = std::upper_bound(literal_.begin(), literal_.end(), begin,
                             [](std::size_t value, const TextRange& r) { return value < r.end; });
  return it != literal_.end() && it->begin < end && begin < end;
}

Text Text::all_literal_if_any() const {
  return Text(bytes_, any_literal());
}

}  // namespace quire::engine::jinja
