#include "added_vocabulary.h"

#include <algorithm>

#include "regex.h"
#include "utf8.h"

namespace quire::engine::detail {
namespace {

// Hugging Face checks single_word tokens against Unicode word characters.
bool ends_with_word(std::string_view text) {
  static const Regex pattern = Regex::compile("\\w\\z");
  bool found = false;
  pattern.for_each_match(text, [&](std::size_t, std::size_t) { found = true; });
  return found;
}

bool starts_with_word(std::string_view text) {
  static const Regex pattern = Regex::compile("\\A\\w");
  bool found = false;
  pattern.for_each_match(text, [&](std::size_t, std::size_t) { found = true; });
  return found;
}

}  // namespace

AddedVocabulary::AddedVocabulary(const JsonField& list, const Normalizer* normalizer,
                                 std::int32_t max_id) {
  list.require_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const JsonField entry = list.at(i);
    AddedToken token;
    token.id = static_cast<std::int32_t>(entry.at("id").integer(0, max_id));
    token.content = entry.at("content").string();
    if (token.content.empty()) entry.at("content").fail("is empty");
    if (!is_valid_utf8(token.content)) entry.at("content").fail("is not valid UTF-8");
    token.special = entry.boolean_or("special", false);
    token.single_word = entry.boolean_or("single_word", false);
    token.lstrip = entry.boolean_or("lstrip", false);
    token.rstrip = entry.boolean_or("rstrip", false);
    token.normalized = entry.boolean_or("normalized", !token.special);
    if (const AddedToken* same = by_id(token.id)) {
      if (same->content != token.content) {
        entry.fail("gives id " + std::to_string(token.id) + " to \"" + token.content +
                   "\", but an earlier added token \"" + same->content + "\" has it");
      }
      continue;
    }
    const auto index = static_cast<std::size_t>(token.id);
    if (index >= index_by_id_.size()) index_by_id_.resize(index + 1, -1);
    index_by_id_[index] = static_cast<std::int32_t>(tokens_.size());
    max_id_ = std::max(max_id_, token.id);
    tokens_.push_back(std::move(token));
  }
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& token = tokens_[i];
    if (token.normalized && normalizer) {
      normalized_.insert(normalizer->normalize(token.content), static_cast<std::int32_t>(i));
    } else if (token.normalized) {
      normalized_.insert(token.content, static_cast<std::int32_t>(i));
    } else {
      raw_.insert(token.content, static_cast<std::int32_t>(i));
    }
  }
}

const AddedToken* AddedVocabulary::by_id(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= index_by_id_.size()) return nullptr;
  const std::int32_t index = index_by_id_[static_cast<std::size_t>(id)];
  return index < 0 ? nullptr : &tokens_[static_cast<std::size_t>(index)];
}

const AddedToken* AddedVocabulary::by_content(std::string_view content) const {
  const auto it = std::find_if(tokens_.begin(), tokens_.end(),
                               [&](const AddedToken& token) { return token.content == content; });
  return it == tokens_.end() ? nullptr : &*it;
}

std::vector<AddedVocabulary::Found> AddedVocabulary::find(std::string_view text,
                                                          const TokenTrie& trie, bool parse_special,
                                                          std::span<const TextRange> literal,
                                                          std::size_t literal_offset) const {
  std::vector<Found> found;
  if (trie.empty()) return found;
  std::size_t previous_end = 0;
  std::size_t position = 0;
  while (position < text.size()) {
    if (!trie.may_start(static_cast<unsigned char>(text[position]))) {
      ++position;
      continue;
    }
    const auto match = trie.longest_at(text, position);
    if (!match) {
      ++position;
      continue;
    }
    const AddedToken& token = tokens_[static_cast<std::size_t>(match->value)];
    std::size_t begin = position;
    std::size_t end = position + match->length;
    position = end;  // a refused match is passed over whole, as Hugging Face does
    if (token.special &&
        (!parse_special || overlaps(literal, literal_offset + begin, literal_offset + end))) {
      continue;
    }
    if (token.single_word && ((begin > 0 && ends_with_word(text.substr(0, begin))) ||
                              (end < text.size() && starts_with_word(text.substr(end))))) {
      continue;
    }
    if (token.lstrip) {
      const std::size_t stripped = trim_end(text.substr(0, begin)).size();
      begin = std::max(stripped, previous_end);
    }
    if (token.rstrip) {
      end = text.size() - trim_start(text.substr(end)).size();
    }
    found.push_back({begin, end, token.id});
    previous_end = end;
    position = std::max(position, end);
  }
  return found;
}

std::vector<Segment> AddedVocabulary::split(std::string_view text, const Normalizer* normalizer,
                                            bool parse_special,
                                            std::span<const TextRange> literal) const {
  std::vector<Segment> segments;
  auto add_text = [&](std::string_view raw, bool at_start, std::size_t offset) {
    if (raw.empty()) return;
    std::string normalized =
        normalizer ? normalizer->normalize(std::string(raw)) : std::string(raw);
    // Offsets do not survive normalization: a normalized special token counts
    // only where none of the raw stretch is literal.
    const bool specials_allowed = parse_special && !overlaps(literal, offset, offset + raw.size());
    std::size_t copied = 0;
    for (const Found& match : find(normalized, normalized_, specials_allowed, {}, 0)) {
      if (copied < match.begin) {
        segments.push_back(
            {normalized.substr(copied, match.begin - copied), -1, at_start && copied == 0});
      }
      segments.push_back({{}, match.id, false});
      copied = match.end;
    }
    if (copied < normalized.size()) {
      segments.push_back({normalized.substr(copied), -1, at_start && copied == 0});
    }
  };
  std::size_t copied = 0;
  for (const Found& match : find(text, raw_, parse_special, literal, 0)) {
    add_text(text.substr(copied, match.begin - copied), copied == 0, copied);
    segments.push_back({{}, match.id, false});
    copied = match.end;
  }
  add_text(text.substr(copied), copied == 0, copied);
  return segments;
}

}  // namespace quire::engine::detail
