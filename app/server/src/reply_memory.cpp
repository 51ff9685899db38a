#include "quire/server/reply_memory.h"

namespace quire::server {

ReplyMemory::ReplyMemory(std::size_t max_tokens) : max_tokens_(max_tokens) {}

void ReplyMemory::remember(std::string_view text, std::span<const std::int32_t> ids,
                           const engine::Tokenizer& tokenizer) {
  if (text.empty() || ids.empty() || ids.size() > max_tokens_) return;
  // Decoding happens outside the lock: it is the costly part.
  if (tokenizer.decode(ids) != text) return;
  const std::lock_guard lock(mutex_);
  if (const auto found = by_text_.find(text); found != by_text_.end()) {
    // The same text again (a regenerated reply that came out the same, or
    // alternatives that agree): the newest ids, moved to the front.
    tokens_ -= found->second->ids.size();
    found->second->ids.assign(ids.begin(), ids.end());
    tokens_ += ids.size();
    order_.splice(order_.begin(), order_, found->second);
  } else {
    order_.push_front(Entry{std::string(text), std::vector<std::int32_t>(ids.begin(), ids.end())});
    // The key views the entry's own string, which a list node never moves.
    by_text_.emplace(order_.front().text, order_.begin());
    tokens_ += ids.size();
  }
  evict_locked();
}

std::optional<std::vector<std::int32_t>> ReplyMemory::recall(std::string_view text) {
  const std::lock_guard lock(mutex_);
  const auto found = by_text_.find(text);
  if (found == by_text_.end()) return std::nullopt;
  order_.splice(order_.begin(), order_, found->second);
  return found->second->ids;
}

std::size_t ReplyMemory::replies() const {
  const std::lock_guard lock(mutex_);
  return order_.size();
}

std::size_t ReplyMemory::tokens() const {
  const std::lock_guard lock(mutex_);
  return tokens_;
}

void ReplyMemory::evict_locked() {
  while (tokens_ > max_tokens_ && !order_.empty()) {
    const Entry& oldest = order_.back();
    tokens_ -= oldest.ids.size();
    by_text_.erase(std::string_view(oldest.text));
    order_.pop_back();
  }
}

}  // namespace quire::server
