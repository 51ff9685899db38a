#pragma once

// Private to the PageCache implementation files.

#include "quire/cache/page_cache.h"

namespace quire::cache {

template <typename Change>
void PageCache::mutate(PageIndex index, Change&& change) {
  PageRecord& page = record(index);
  const PageState before = page.state();
  const bool shared_before = page.refs > 1;
  change(page);
  // Content read from disk is a full page; anything less is other content.
  if (page.identity.valid < config_.page_size) page.from_disk = false;
  const PageState after = page.state();
  const bool shared_after = page.refs > 1;

  auto count_of = [this](PageState state) -> int& {
    switch (state) {
      case PageState::Free:
        return counts_.free;
      case PageState::Referenced:
        return counts_.referenced;
      case PageState::Cached:
        break;
    }
    return counts_.cached;
  };
  if (before != after) {
    --count_of(before);
    ++count_of(after);
    if (before == PageState::Free) free_.erase(index);
    if (after == PageState::Free) free_.insert(index);
  }
  counts_.shared += static_cast<int>(shared_after) - static_cast<int>(shared_before);
}

}  // namespace quire::cache
