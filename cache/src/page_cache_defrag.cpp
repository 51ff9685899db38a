// Defragmentation: lay pages out along their hash chains, oldest chains first,
// and return the page moves that turn the old layout into the new one.

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "page_cache_mutation.h"
#include "quire/cache/page_cache.h"

namespace quire::cache {
namespace {

// Content moves as open chains (ending in a page whose bytes are not needed)
// and closed cycles. `target[p]` is the new place of page p, or kNoPage.
std::vector<PageMoveChain> move_chains(const std::vector<PageIndex>& target,
                                       const std::vector<bool>& moving) {
  const std::size_t n = target.size();
  std::vector<bool> incoming(n, false);
  for (std::size_t p = 0; p < n; ++p) {
    if (moving[p]) incoming[static_cast<std::size_t>(target[p])] = true;
  }
  std::vector<bool> done(n, false);
  std::vector<PageMoveChain> chains;
  for (std::size_t start = 0; start < n; ++start) {
    if (!moving[start] || incoming[start]) continue;
    PageMoveChain chain;
    std::size_t current = start;
    chain.pages.push_back(static_cast<PageIndex>(current));
    while (moving[current]) {
      done[current] = true;
      current = static_cast<std::size_t>(target[current]);
      chain.pages.push_back(static_cast<PageIndex>(current));
    }
    chains.push_back(std::move(chain));
  }
  for (std::size_t start = 0; start < n; ++start) {
    if (!moving[start] || done[start]) continue;
    PageMoveChain chain;
    chain.cycle = true;
    std::size_t current = start;
    do {
      done[current] = true;
      chain.pages.push_back(static_cast<PageIndex>(current));
      current = static_cast<std::size_t>(target[current]);
    } while (current != start);
    chains.push_back(std::move(chain));
  }
  return chains;
}

}  // namespace

std::optional<DefragPlan> PageCache::defragment() {
  for (const PageRecord& page : pages_) {
    if (page.last_access <= defrag_epoch_) return std::nullopt;
  }

  // New order: a depth-first walk of each chain tree, oldest roots first.
  const std::size_t n = pages_.size();
  std::vector<std::vector<PageIndex>> children(n);
  std::vector<PageIndex> roots;
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    if (page.state() == PageState::Free) continue;
    const std::optional<PageIndex> parent = chain_parent(page.identity);
    if (parent && *parent != index) {
      children[static_cast<std::size_t>(*parent)].push_back(index);
    } else {
      roots.push_back(index);
    }
  }
  auto older = [this](PageIndex a, PageIndex b) {
    const std::uint64_t access_a = page(a).last_access, access_b = page(b).last_access;
    return access_a != access_b ? access_a < access_b : a < b;
  };
  std::sort(roots.begin(), roots.end(), older);
  for (std::vector<PageIndex>& list : children)
    std::sort(list.begin(), list.end(), older);

  std::vector<PageIndex> order;
  std::vector<bool> placed(n, false);
  std::vector<PageIndex> stack;
  for (const PageIndex root : roots) {
    stack.push_back(root);
    while (!stack.empty()) {
      const PageIndex index = stack.back();
      stack.pop_back();
      if (placed[static_cast<std::size_t>(index)]) continue;
      placed[static_cast<std::size_t>(index)] = true;
      order.push_back(index);
      const std::vector<PageIndex>& next = children[static_cast<std::size_t>(index)];
      stack.insert(stack.end(), next.rbegin(), next.rend());
    }
  }
  // Whatever a chain walk missed keeps its relative order after the chains.
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    if (page(index).state() != PageState::Free && !placed[static_cast<std::size_t>(index)]) {
      order.push_back(index);
      placed[static_cast<std::size_t>(index)] = true;
    }
  }
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    if (!placed[static_cast<std::size_t>(index)]) order.push_back(index);
  }

  std::vector<PageIndex> target(n, kNoPage);
  for (std::size_t slot = 0; slot < n; ++slot)
    target[static_cast<std::size_t>(order[slot])] = static_cast<PageIndex>(slot);

  std::vector<bool> moving(n, false);
  int moved = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (pages_[p].holds_content() && target[p] != static_cast<PageIndex>(p)) {
      moving[p] = true;
      ++moved;
    }
  }
  const int threshold =
      static_cast<int>(std::floor(config_.defrag_skip_fraction * config_.num_pages));
  if (moved <= threshold) return std::nullopt;

  DefragPlan plan;
  plan.moves = move_chains(target, moving);
  plan.pages_moved = moved;

  // Apply the new layout to the bookkeeping.
  std::vector<PageRecord> relocated(n);
  for (std::size_t p = 0; p < n; ++p) {
    relocated[static_cast<std::size_t>(target[p])] = std::move(pages_[p]);
  }
  pages_ = std::move(relocated);
  for (auto& [hash, index] : index_)
    index = target[static_cast<std::size_t>(index)];
  for (auto& [id, seq] : sequences_) {
    for (PageIndex& index : seq.pages) {
      if (index != kNoPage) index = target[static_cast<std::size_t>(index)];
    }
  }
  free_.clear();
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    if (page(index).state() == PageState::Free) free_.insert(free_.end(), index);
  }

  ++generation_;
  ++counters_.defragmentations;
  counters_.pages_moved += moved;
  defrag_epoch_ = clock_->now();
  return plan;
}

std::vector<SequenceId> PageCache::forget_moved_pages(const DefragPlan& plan) {
  ++generation_;
  // A chain's source may have been overwritten before its own move ran, so
  // every page of every chain is in doubt, not only the destinations.
  std::set<PageIndex> touched;
  for (const PageMoveChain& chain : plan.moves)
    touched.insert(chain.pages.begin(), chain.pages.end());
  for (const PageIndex index : touched) {
    mutate(index, [&](PageRecord& page) {
      if (page.indexed) {
        index_.erase(page.identity.hash);
        page.indexed = false;
      }
      page.saved.reset();
      if (page.refs == 0) {
        clear_identity(page);
      } else {
        // Its holder ends; on release the page is freed, not cached.
        page.identity.valid = 0;
        page.identity.hashed = false;
      }
    });
  }
  std::vector<SequenceId> affected;
  for (const auto& [id, seq] : sequences_) {
    if (std::any_of(seq.pages.begin(), seq.pages.end(),
                    [&](PageIndex index) { return touched.contains(index); })) {
      affected.push_back(id);
    }
  }
  return affected;
}

}  // namespace quire::cache
