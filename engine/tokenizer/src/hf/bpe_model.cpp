#include "bpe_model.h"

#include <algorithm>
#include <mutex>
#include <queue>
#include <utility>

#include "utf8.h"

namespace quire::engine::detail {
namespace {

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // ▁

std::string byte_piece_name(int byte) {
  static const char* hex = "0123456789ABCDEF";
  return std::string("<0x") + hex[byte >> 4] + hex[byte & 15] + ">";
}

bool is_byte_piece_name(std::string_view text) {
  return text.size() == 6 && text.starts_with("<0x") && text.ends_with('>');
}

// The last code point of valid UTF-8 that is not empty.
char32_t last_code_point(std::string_view text) {
  std::size_t start = text.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
    --start;
  return code_point_at(text, start).value;
}

}  // namespace

std::unique_ptr<BpeModel> BpeModel::read(const JsonField& config, std::size_t extra_ids) {
  auto model = std::make_unique<BpeModel>();
  const JsonField vocab = config.at("vocab");
  vocab.require_object();
  // Ids are dense in real files; allow holes, but not without bound.
  const std::size_t entries = vocab.json().size();
  const auto max_id = static_cast<std::int64_t>(2 * (entries + extra_ids) + 1024);
  model->vocab_.reserve(entries);
  for (const auto& [text, value] : vocab.json().items()) {
    const JsonField id_field(value, vocab.where() + "." + text, vocab.file());
    if (!is_valid_utf8(text)) id_field.fail("is a token that is not valid UTF-8");
    const auto id = static_cast<std::int32_t>(id_field.integer(0, max_id));
    model->vocab_.emplace(text, id);
    const auto index = static_cast<std::size_t>(id);
    if (index >= model->tokens_.size()) {
      model->tokens_.resize(index + 1);
      model->present_.resize(index + 1, false);
    }
    if (model->present_[index]) {
      id_field.fail("gives id " + std::to_string(id) + " to \"" + text + "\", but \"" +
                    model->tokens_[index] + "\" has it already");
    }
    model->tokens_[index] = text;
    model->present_[index] = true;
  }

  if (const auto dropout = config.find("dropout")) {
    const double value = dropout->number();
    if (value != 0.0 && value != 1.0) {
      dropout->fail_unsupported("is " + std::to_string(value) +
                                "; Quire tokenizes without BPE dropout");
    }
  }
  model->continuing_subword_prefix_ = config.string_or("continuing_subword_prefix", "");
  model->end_of_word_suffix_ = config.string_or("end_of_word_suffix", "");
  model->fuse_unknown_ = config.boolean_or("fuse_unk", false);
  model->byte_fallback_ = config.boolean_or("byte_fallback", false);
  model->ignore_merges_ = config.boolean_or("ignore_merges", false);
  if (const auto unknown = config.find("unk_token")) {
    const std::string name = unknown->string();
    const auto id = model->find(name);
    if (!id) unknown->fail("is \"" + name + "\", which is not in the vocabulary");
    model->unknown_ = id;
  }
  for (int byte = 0; byte < 256; ++byte) {
    model->byte_ids_[static_cast<std::size_t>(byte)] =
        model->find(byte_piece_name(byte)).value_or(-1);
  }

  const JsonField merges = config.at("merges");
  merges.require_array();
  model->merges_.reserve(merges.size());
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  pairs.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const JsonField entry = merges.at(rank);
    std::string left;
    std::string right;
    if (entry.json().is_string()) {
      // "a b": a token never holds a plain space in files that use this form.
      const std::string line = entry.string();
      const auto space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        entry.fail("is \"" + line + "\", not two tokens separated by one space");
      }
      left = line.substr(0, space);
      right = line.substr(space + 1);
    } else {
      if (!entry.json().is_array() || entry.size() != 2) {
        entry.fail("must be a pair of tokens, \"a b\" or [\"a\", \"b\"]");
      }
      left = entry.at(0).string();
      right = entry.at(1).string();
    }
    const auto left_id = model->find(left);
    const auto right_id = model->find(right);
    const auto merged_id = model->find(left + right);
    for (const auto& [name, id] : {std::pair{&left, left_id}, std::pair{&right, right_id}}) {
      if (!id) entry.fail("names \"" + *name + "\", which is not in the vocabulary");
    }
    if (!merged_id) {
      entry.fail("merges into \"" + left + right + "\", which is not in the vocabulary");
    }
    // A pair listed twice takes its last rank, as in Hugging Face (and tokenizers.js).
    model->merges_.insert(*left_id, *right_id, {static_cast<std::int32_t>(rank), *merged_id});
    pairs.emplace_back(*left_id, *right_id);
  }
  model->plan_metaspace_cuts(pairs);
  return model;
}

void BpeModel::plan_metaspace_cuts(
    const std::vector<std::pair<std::int32_t, std::int32_t>>& merges) {
  // The characters of a word are the first symbols only without a subword
  // prefix or suffix, and "▁" must be a symbol of its own.
  if (!continuing_subword_prefix_.empty() || !end_of_word_suffix_.empty() || !find(kMetaspace)) {
    return;
  }
  for (const auto& [left, right] : merges) {
    const std::string& left_text = tokens_[static_cast<std::size_t>(left)];
    if (!tokens_[static_cast<std::size_t>(right)].starts_with(kMetaspace)) continue;
    // A left symbol at a cut ends in a character other than "▁"; an unknown
    // or byte piece stands for one whatever its text says.
    const bool stands_for_text = left != unknown_ && !is_byte_piece_name(left_text);
    if (stands_for_text && left_text.ends_with(kMetaspace)) continue;
    if (!stands_for_text || left_text.empty()) return;  // no cut is safe
    const char32_t joined = last_code_point(left_text);
    if (std::find(metaspace_joins_.begin(), metaspace_joins_.end(), joined) ==
        metaspace_joins_.end()) {
      metaspace_joins_.push_back(joined);
    }
  }
  cut_before_metaspace_ = true;
}

bool BpeModel::may_cut_before(std::string_view word, std::size_t position) const {
  const char32_t previous = last_code_point(word.substr(0, position));
  return previous != U'\u2581' && std::find(metaspace_joins_.begin(), metaspace_joins_.end(),
                                            previous) == metaspace_joins_.end();
}

std::optional<std::int32_t> BpeModel::find(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::token(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size() ||
      !present_[static_cast<std::size_t>(id)]) {
    return nullptr;
  }
  return &tokens_[static_cast<std::size_t>(id)];
}

void BpeModel::tokenize(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (const auto id = find(word)) {
      out.push_back(*id);
      return;
    }
  }
  if (!cut_before_metaspace_) {
    tokenize_cached(word, out);
    return;
  }
  std::size_t begin = 0;
  for (std::size_t position = word.find(kMetaspace, 1); position != std::string_view::npos;
       position = word.find(kMetaspace, position + kMetaspace.size())) {
    if (!may_cut_before(word, position)) continue;
    tokenize_cached(word.substr(begin, position - begin), out);
    begin = position;
  }
  tokenize_cached(word.substr(begin), out);
}

void BpeModel::tokenize_cached(std::string_view word, std::vector<std::int32_t>& out) const {
  const bool cacheable = word.size() <= kCacheableWord;
  if (cacheable) {
    std::shared_lock lock(cache_mutex_);
    if (const auto it = cache_.find(word); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const std::size_t first = out.size();
  merge_word(word, out);
  if (cacheable) {
    std::vector<std::int32_t> ids(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    std::unique_lock lock(cache_mutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(word), std::move(ids));
  }
}

void BpeModel::merge_word(std::string_view word, std::vector<std::int32_t>& out) const {
  struct Symbol {
    std::int32_t id;
    std::int32_t previous;
    std::int32_t next;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](std::int32_t id) {
    const auto index = static_cast<std::int32_t>(symbols.size());
    if (index > 0) symbols.back().next = index;
    symbols.push_back({id, index - 1, -1});
  };

  // The characters, each a token, a run of byte pieces, or unknown.
  std::optional<std::int32_t> pending_unknown;
  std::string piece;
  for (std::size_t position = 0; position < word.size();) {
    const std::size_t length = code_point_at(word, position).length;
    piece.clear();
    if (position > 0) piece += continuing_subword_prefix_;
    piece.append(word.substr(position, length));
    if (position + length == word.size()) piece += end_of_word_suffix_;
    const std::string_view character = word.substr(position, length);
    position += length;

    if (const auto id = find(piece)) {
      if (pending_unknown) add(*std::exchange(pending_unknown, std::nullopt));
      add(*id);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (const char c : character)
        all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all) {
        if (pending_unknown) add(*std::exchange(pending_unknown, std::nullopt));
        for (const char c : character)
          add(byte_ids_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (unknown_) {
      // fuse_unk: a run of unknown characters is one unknown token.
      if (pending_unknown && !fuse_unknown_) add(*pending_unknown);
      pending_unknown = unknown_;
    }
  }
  if (pending_unknown) add(*pending_unknown);

  struct Candidate {
    std::int32_t rank;
    std::int32_t position;
    std::int32_t merged;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : position > other.position;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](std::int32_t left) {
    const std::int32_t right = symbols[static_cast<std::size_t>(left)].next;
    if (right < 0) return;
    const MergeTable::Merge* merge = merges_.find(symbols[static_cast<std::size_t>(left)].id,
                                                  symbols[static_cast<std::size_t>(right)].id);
    if (merge) queue.push({merge->rank, left, merge->id});
  };
  for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(symbols.size()); ++i)
    consider(i);
  std::vector<bool> gone(symbols.size(), false);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    const auto left = static_cast<std::size_t>(top.position);
    if (gone[left] || symbols[left].next < 0) continue;
    const auto right = static_cast<std::size_t>(symbols[left].next);
    const MergeTable::Merge* merge = merges_.find(symbols[left].id, symbols[right].id);
    // The pair changed since the candidate was queued.
    if (!merge || merge->rank != top.rank || merge->id != top.merged) continue;
    symbols[left].id = top.merged;
    symbols[left].next = symbols[right].next;
    if (symbols[right].next >= 0) {
      symbols[static_cast<std::size_t>(symbols[right].next)].previous = top.position;
    }
    gone[right] = true;
    if (symbols[left].previous >= 0) consider(symbols[left].previous);
    consider(top.position);
  }
  for (std::int32_t i = symbols.empty() ? -1 : 0; i >= 0;
       i = symbols[static_cast<std::size_t>(i)].next)
    out.push_back(symbols[static_cast<std::size_t>(i)].id);
}

}  // namespace quire::engine::detail
