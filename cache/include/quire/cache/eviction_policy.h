#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "quire/cache/types.h"

namespace quire::cache {

// An unreferenced page whose content may be dropped to make room.
struct EvictionCandidate {
  PageIndex page = kNoPage;
  std::uint64_t last_access = 0;
  // The page holding the previous page of this page's chain, or kNoPage.
  PageIndex parent = kNoPage;
  // Pages with content whose chain parent is this page (referenced ones included).
  int children = 0;
};

// Chooses which cached pages to evict. A small strategy object, so that the
// cache's users (and tests) can swap it.
class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // Up to `count` distinct pages from `candidates`, first victim first.
  virtual std::vector<PageIndex> select(std::span<const EvictionCandidate> candidates,
                                        std::size_t count) const = 0;
};

// Leaf-first least-recently-used: only pages that no other page continues are
// eligible, oldest first; evicting a leaf can make its parent a leaf. The shared
// start of a chain (a system prompt, earlier turns) therefore outlives its tail.
// When no leaf is left, the oldest remaining pages go.
class LeafFirstLru final : public EvictionPolicy {
 public:
  std::vector<PageIndex> select(std::span<const EvictionCandidate> candidates,
                                std::size_t count) const override;
};

// Plain least-recently-used, blind to chains.
class LeastRecentlyUsed final : public EvictionPolicy {
 public:
  std::vector<PageIndex> select(std::span<const EvictionCandidate> candidates,
                                std::size_t count) const override;
};

}  // namespace quire::cache
