#pragma once

// The token ids of the replies the server sent, by their text. OpenAI's
// clients send the whole conversation again with every request, earlier
// replies as text; tokenizing that text does not always give the ids the
// model generated (a generated sequence need not be the tokenizer's own
// segmentation of its text), and from the first id that differs the cache
// has nothing to offer: every later turn would be computed again. With the
// generated ids back in their place, each request's prompt extends the last
// one token for token, as it does in the app.

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::server {

class ReplyMemory {
 public:
  // At most `max_tokens` ids in all; the replies used longest ago go first.
  explicit ReplyMemory(std::size_t max_tokens = std::size_t{1} << 20);

  // Keeps `ids` for `text` when they decode to exactly that text (a reply
  // cut at a stop string, or one whose ids decode to other text, is left
  // out: its text would not bring these ids back). Thread-safe.
  void remember(std::string_view text, std::span<const std::int32_t> ids,
                const engine::Tokenizer& tokenizer);
  // The ids a reply of exactly this text was generated as, if kept.
  std::optional<std::vector<std::int32_t>> recall(std::string_view text);

  std::size_t replies() const;
  std::size_t tokens() const;

 private:
  struct Entry {
    std::string text;
    std::vector<std::int32_t> ids;
  };
  using Order = std::list<Entry>;  // most recently used first

  void evict_locked();

  std::size_t max_tokens_;
  mutable std::mutex mutex_;
  Order order_;
  std::unordered_map<std::string_view, Order::iterator> by_text_;
  std::size_t tokens_ = 0;
};

}  // namespace quire::server
