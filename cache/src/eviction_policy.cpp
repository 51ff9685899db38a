#include "quire/cache/eviction_policy.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace quire::cache {
namespace {

struct OlderFirst {
  bool operator()(const EvictionCandidate& a, const EvictionCandidate& b) const {
    if (a.last_access != b.last_access) return a.last_access < b.last_access;
    return a.page < b.page;
  }
};

// Appends the oldest candidates not chosen yet until `count` pages are chosen.
void fill_by_age(std::span<const EvictionCandidate> candidates, std::size_t count,
                 std::vector<PageIndex>& chosen) {
  if (chosen.size() >= count) return;
  const std::unordered_set<PageIndex> taken(chosen.begin(), chosen.end());
  std::vector<EvictionCandidate> rest;
  for (const EvictionCandidate& candidate : candidates) {
    if (!taken.contains(candidate.page)) rest.push_back(candidate);
  }
  std::sort(rest.begin(), rest.end(), OlderFirst{});
  for (std::size_t i = 0; i < rest.size() && chosen.size() < count; ++i) {
    chosen.push_back(rest[i].page);
  }
}

}  // namespace

std::vector<PageIndex> LeafFirstLru::select(std::span<const EvictionCandidate> candidates,
                                            std::size_t count) const {
  std::unordered_map<PageIndex, std::size_t> position;
  std::vector<int> children(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    position.emplace(candidates[i].page, i);
    children[i] = candidates[i].children;
  }

  // Min-heap of current leaves, oldest first.
  auto younger = [](const EvictionCandidate& a, const EvictionCandidate& b) {
    return OlderFirst{}(b, a);
  };
  std::priority_queue<EvictionCandidate, std::vector<EvictionCandidate>, decltype(younger)> leaves(
      younger);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (children[i] == 0) leaves.push(candidates[i]);
  }

  std::vector<PageIndex> chosen;
  chosen.reserve(std::min(count, candidates.size()));
  while (chosen.size() < count && !leaves.empty()) {
    const EvictionCandidate leaf = leaves.top();
    leaves.pop();
    chosen.push_back(leaf.page);
    auto parent = position.find(leaf.parent);
    if (parent != position.end() && --children[parent->second] == 0) {
      leaves.push(candidates[parent->second]);
    }
  }
  fill_by_age(candidates, count, chosen);
  return chosen;
}

std::vector<PageIndex> LeastRecentlyUsed::select(std::span<const EvictionCandidate> candidates,
                                                 std::size_t count) const {
  std::vector<PageIndex> chosen;
  fill_by_age(candidates, count, chosen);
  return chosen;
}

}  // namespace quire::cache
