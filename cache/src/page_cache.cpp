#include "quire/cache/page_cache.h"

#include <algorithm>
#include <stdexcept>

#include "page_cache_mutation.h"

namespace quire::cache {

const char* to_string(PageState state) {
  switch (state) {
    case PageState::Free:
      return "free";
    case PageState::Referenced:
      return "referenced";
    case PageState::Cached:
      return "cached";
  }
  return "?";
}

const char* to_string(AdmissionStatus status) {
  switch (status) {
    case AdmissionStatus::Fits:
      return "fits";
    case AdmissionStatus::WaitForPages:
      return "wait for pages";
    case AdmissionStatus::NeverFits:
      return "never fits";
  }
  return "?";
}

PageCache::PageCache(CacheConfig config, std::unique_ptr<EvictionPolicy> policy,
                     std::unique_ptr<Clock> clock)
    : config_(std::move(config)),
      policy_(policy ? std::move(policy) : std::make_unique<LeafFirstLru>()),
      clock_(clock ? std::move(clock) : std::make_unique<LogicalClock>()),
      host_(config_.host_pages) {
  config_.validate();
  pages_.resize(static_cast<std::size_t>(config_.num_pages));
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    PageRecord& page = record(index);
    page.identity.tokens.assign(static_cast<std::size_t>(config_.page_size), 0);
    page.identity.hash = placeholders_.next();
    free_.insert(free_.end(), index);
  }
  counts_.free = config_.num_pages;
  if (config_.has_window_pool()) window_pool_ = std::make_unique<PageCache>(config_.window_pool());
}

PageCache::~PageCache() = default;

PageCache::Sequence& PageCache::sequence(SequenceId id) {
  auto found = sequences_.find(id);
  if (found == sequences_.end()) {
    throw std::out_of_range("no sequence " + std::to_string(id) + " in the cache");
  }
  return found->second;
}

const PageCache::Sequence& PageCache::sequence(SequenceId id) const {
  auto found = sequences_.find(id);
  if (found == sequences_.end()) {
    throw std::out_of_range("no sequence " + std::to_string(id) + " in the cache");
  }
  return found->second;
}

std::vector<SequenceId> PageCache::sequences() const {
  std::vector<SequenceId> ids;
  ids.reserve(sequences_.size());
  for (const auto& [id, seq] : sequences_)
    ids.push_back(id);
  return ids;
}

std::span<const PageIndex> PageCache::page_table(SequenceId id) const {
  return sequence(id).pages;
}

std::span<const TokenId> PageCache::tokens(SequenceId id) const {
  return sequence(id).tokens;
}

std::int32_t PageCache::computed(SequenceId id) const {
  return sequence(id).computed;
}

std::optional<PageIndex> PageCache::indexed_page(const PageHash& hash) const {
  auto found = index_.find(hash);
  if (found == index_.end()) return std::nullopt;
  return found->second;
}

std::optional<PageIndex> PageCache::chain_parent(const PageIdentity& identity) const {
  if (identity.link != ChainLink::Known) return std::nullopt;
  return indexed_page(identity.previous);
}

void PageCache::clear_identity(PageRecord& page) {
  PageIdentity& identity = page.identity;
  identity.hash = placeholders_.next();
  identity.hashed = false;
  identity.link = ChainLink::Unknown;
  identity.filled = 0;
  identity.valid = 0;
  page.saved.reset();
  page.indexed = false;
}

void PageCache::mark_computed_here(SequenceId id, std::int32_t end) {
  Sequence& seq = sequence(id);
  if (end < 0 || static_cast<std::size_t>(end) > seq.tokens.size()) {
    throw std::out_of_range("mark_computed past the sequence's " +
                            std::to_string(seq.tokens.size()) + " tokens");
  }
  if (end <= seq.computed) return;
  ++generation_;
  const std::int32_t size = config_.page_size;
  const std::uint64_t now = clock_->now();
  for (std::size_t position = static_cast<std::size_t>(seq.computed / size);
       position * size < static_cast<std::size_t>(end); ++position) {
    const std::int32_t target =
        std::min<std::int32_t>(end - static_cast<std::int32_t>(position) * size, size);
    const PageIndex index = seq.pages[position];
    if (index == kNoPage) {
      throw std::logic_error("mark_computed over position " + std::to_string(position * size) +
                             ", which has no page (ensure_pages was not called)");
    }
    mutate(index, [&](PageRecord& page) {
      if (page.identity.valid < target) {
        page.identity.valid = target;
        page.identity.filled = std::max(page.identity.filled, target);
        page.saved.reset();  // the previous identity's bytes are overwritten now
      }
      page.last_access = now;
    });
    const PageIdentity& identity = record(index).identity;
    if (identity.valid == size && !identity.hashed) finish_page(seq, position);
  }
  seq.computed = end;
  drop_out_of_window(seq);
}

void PageCache::mark_overwritten_here(SequenceId id, std::int32_t begin, std::int32_t end) {
  const Sequence& seq = sequence(id);
  const std::int32_t size = config_.page_size;
  const auto first = static_cast<std::size_t>(std::max(begin, 0) / size);
  const std::size_t last =
      std::min(seq.pages.size(), static_cast<std::size_t>((end + size - 1) / size));
  for (std::size_t position = first; position < last; ++position) {
    const PageIndex index = seq.pages[position];
    if (index == kNoPage || !record(index).saved) continue;
    ++generation_;
    mutate(index, [](PageRecord& page) { page.saved.reset(); });
  }
}

void PageCache::truncate_here(SequenceId id, std::int32_t length) {
  Sequence& seq = sequence(id);
  const auto end = static_cast<std::int32_t>(seq.tokens.size());
  if (length < seq.computed || length > end) {
    throw std::out_of_range("truncate to " + std::to_string(length) +
                            " tokens outside the sequence's computed " +
                            std::to_string(seq.computed) + " to " + std::to_string(end));
  }
  if (length == end) return;
  // The pages there may hold K/V of the dropped tokens in some layers.
  mark_overwritten_here(id, length, end);
  ++generation_;
  const std::int32_t size = config_.page_size;
  const auto first = static_cast<std::size_t>(length / size);
  const std::size_t last =
      std::min(seq.pages.size(), static_cast<std::size_t>((end + size - 1) / size));
  for (std::size_t position = first; position < last; ++position) {
    const PageIndex index = seq.pages[position];
    if (index == kNoPage) continue;
    if (record(index).refs != 1 || record(index).identity.hashed) {
      throw std::logic_error("truncate into a shared or sealed page");
    }
    const std::int32_t kept = std::max(0, length - static_cast<std::int32_t>(position) * size);
    mutate(index, [&](PageRecord& page) {
      page.identity.filled = std::max(page.identity.valid, std::min(kept, size));
    });
  }
  counters_.generated_tokens -= end - length;
  seq.tokens.resize(static_cast<std::size_t>(length));
}

void PageCache::finish_page(Sequence& seq, std::size_t position) {
  const PageIndex index = seq.pages[position];
  PageRecord& page = record(index);
  const PageHash* previous = nullptr;
  // Pages fill in order, so the previous one has its hash unless its chain is
  // broken; then this page stays unhashed (still usable, never shared).
  if (seq.hashes.size() != position) return;
  if (position > 0) previous = &seq.hashes[position - 1];
  const PageHash hash =
      hash_page(previous, std::span<const TokenId>(page.identity.tokens.data(),
                                                   static_cast<std::size_t>(config_.page_size)));
  page.identity.link = previous ? ChainLink::Known : ChainLink::Root;
  if (previous) page.identity.previous = *previous;
  seq.hashes.push_back(hash);

  const std::optional<PageIndex> existing = indexed_page(hash);
  if (existing && record(*existing).identity.valid == config_.page_size) {
    // Another page already holds exactly this content: share it, drop ours.
    const PageIndex other = *existing;
    mutate(other, [&](PageRecord& target) {
      ++target.refs;
      target.last_access = page.last_access;
    });
    seq.pages[position] = other;
    seq.owned[position] = false;
    mutate(index, [&](PageRecord& duplicate) {
      --duplicate.refs;
      if (duplicate.refs == 0) clear_identity(duplicate);
    });
    ++counters_.dedup_switches;
  } else {
    page.identity.hash = hash;
    page.identity.hashed = true;
    if (!existing) {
      index_.emplace(hash, index);
      page.indexed = true;
    }
    // With an existing page still being computed, ours stays an unindexed
    // duplicate until one of them is released.
  }
  if (position + 1 < seq.pages.size() && seq.pages[position + 1] != kNoPage) {
    const PageIndex next = seq.pages[position + 1];
    mutate(next, [&](PageRecord& following) {
      if (following.identity.valid == 0 && !following.identity.hashed) {
        following.identity.link = ChainLink::Known;
        following.identity.previous = hash;
      }
    });
  }
}

void PageCache::settle_unreferenced(PageIndex index) {
  mutate(index, [&](PageRecord& page) {
    PageIdentity& identity = page.identity;
    if (identity.valid == 0) {
      if (page.indexed) {
        index_.erase(identity.hash);
        page.indexed = false;
      }
      if (!page.saved) {
        clear_identity(page);
        return;
      }
      // Reserved but never written: the previous content is still there.
      identity = std::move(*page.saved);
      page.saved.reset();
      if (identity.hashed) {
        if (index_.contains(identity.hash)) {
          clear_identity(page);
        } else {
          index_.emplace(identity.hash, index);
          page.indexed = true;
        }
      }
      return;
    }
    page.saved.reset();
    identity.filled = identity.valid;
    if (identity.hashed && identity.valid == config_.page_size) {
      if (page.indexed) return;
      if (index_.contains(identity.hash)) {
        clear_identity(page);  // a duplicate of an indexed page
      } else {
        index_.emplace(identity.hash, index);
        page.indexed = true;
      }
      return;
    }
    // Partial content: kept, under a placeholder, as a source for partial copies.
    if (page.indexed) {
      index_.erase(identity.hash);
      page.indexed = false;
    }
    identity.hashed = false;
    identity.hash = placeholders_.next();
  });
}

void PageCache::release_here(SequenceId id) {
  auto found = sequences_.find(id);
  if (found == sequences_.end()) {
    throw std::out_of_range("no sequence " + std::to_string(id) + " in the cache");
  }
  ++generation_;
  const std::vector<PageIndex> pages = std::move(found->second.pages);
  reserved_pages_ -= found->second.reserved;
  sequences_.erase(found);
  // Tail first, so a chain's first pages carry the most recent access stamps.
  for (auto it = pages.rbegin(); it != pages.rend(); ++it) {
    const PageIndex index = *it;
    if (index == kNoPage) continue;
    const std::uint64_t now = clock_->now();
    mutate(index, [&](PageRecord& page) {
      --page.refs;
      page.last_access = now;
    });
    if (record(index).refs == 0) settle_unreferenced(index);
  }
}

void PageCache::abandon_here(SequenceId id, const CacheInstructions& instructions) {
  // Throws for an unknown sequence before anything changes. Its admission
  // did not happen as far as the statistics go: it is planned again.
  const Sequence::Admitted admitted = sequence(id).admitted;
  ++generation_;
  counters_.prompt_tokens -= admitted.prompt;
  counters_.reused_tokens -= admitted.reused;
  counters_.copied_tokens -= admitted.copied;
  counters_.restored_tokens -= admitted.restored;
  counters_.host_restores -= admitted.host_restores;
  counters_.disk_restored_tokens -= admitted.disk_restored;
  counters_.disk_restores -= admitted.disk_restores;
  counters_.computed_tokens -= admitted.computed;
  drop_host_saves(instructions.saves);
  // Only this sequence holds these pages (restores and copies go into pages
  // it took), so with nothing counted as written they are freed on release.
  // A page already handed back behind the window (a copy moved the window
  // past it at commit) is freed here.
  const auto forget_content = [&](PageIndex index) {
    mutate(index, [](PageRecord& page) {
      page.identity.valid = 0;
      page.saved.reset();
    });
    if (record(index).refs == 0) settle_unreferenced(index);
  };
  for (const HostRestore& restore : instructions.restores)
    forget_content(restore.page);
  for (const DiskRestore& restore : instructions.disk_restores)
    forget_content(restore.page);
  for (const PageCopy& copy : instructions.copies)
    forget_content(copy.destination);
  release_here(id);
}

void PageCache::drop_host_saves(std::span<const HostSave> saves) {
  if (saves.empty()) return;
  ++generation_;
  for (const HostSave& save : saves)
    host_.forget(save.slot);
}

void PageCache::release_after_failure_here(SequenceId id) {
  const Sequence& seq = sequence(id);
  // The whole table, pages reserved for decode included: what failed is not
  // known, and a page forgotten only costs its content being computed again.
  const auto end = static_cast<std::int32_t>(seq.pages.size()) * config_.page_size;
  mark_overwritten_here(id, seq.computed, end);
  release_here(id);
}

void PageCache::preempt(SequenceId id) {
  release_here(id);
  ++counters_.preemptions;
}

AppendResult PageCache::append_here(SequenceId id, std::span<const TokenId> new_tokens) {
  if (new_tokens.empty()) return {};
  const std::size_t size = static_cast<std::size_t>(config_.page_size);
  const std::size_t total = sequence(id).tokens.size() + new_tokens.size();
  AppendResult result = take_slots(id, (total + size - 1) / size);
  if (result.status != AppendStatus::Appended) return result;

  ++generation_;
  Sequence& seq = sequence(id);
  for (const TokenId token : new_tokens) {
    const std::size_t position = seq.tokens.size();
    PageRecord& page = record(seq.pages[position / size]);
    if (page.refs != 1) throw std::logic_error("append into a shared page");
    const std::size_t offset = position % size;
    page.identity.tokens[offset] = token;
    page.identity.filled = static_cast<std::int32_t>(offset) + 1;
    seq.tokens.push_back(token);
  }
  counters_.generated_tokens += static_cast<std::int64_t>(new_tokens.size());
  return result;
}

void PageCache::place_layer(std::size_t layer, int device) {
  CacheLayer& placed = config_.layers.at(layer);
  placed.device = device;
  if (window_pool_ && placed.windowed) window_pool_->place_layer(layer, device);
}

void PageCache::attach_disk(const DiskIndex* index) {
  if (index && window_pool_) {
    throw std::invalid_argument(
        "the disk tier does not keep the pages of sliding-window layers mixed with global ones");
  }
  disk_ = index;
  ++generation_;  // plans prepared without the disk tier are stale
}

CacheStats PageCache::stats() const {
  CacheStats stats;
  stats.page_size = config_.page_size;
  stats.total_pages = config_.num_pages;
  stats.free_pages = counts_.free;
  stats.referenced_pages = counts_.referenced;
  stats.cached_pages = counts_.cached;
  stats.shared_pages = counts_.shared;
  stats.sequences = static_cast<int>(sequences_.size());
  stats.prompt_tokens = counters_.prompt_tokens;
  stats.reused_tokens = counters_.reused_tokens;
  stats.copied_tokens = counters_.copied_tokens;
  stats.restored_tokens = counters_.restored_tokens;
  stats.computed_tokens = counters_.computed_tokens;
  stats.generated_tokens = counters_.generated_tokens;
  stats.branches = counters_.branches;
  stats.evictions = counters_.evictions;
  stats.host_saves = counters_.host_saves;
  stats.host_restores = counters_.host_restores;
  stats.host_evictions = counters_.host_evictions;
  stats.disk_saves = counters_.disk_saves;
  stats.disk_restores = counters_.disk_restores;
  stats.disk_restored_tokens = counters_.disk_restored_tokens;
  stats.dedup_switches = counters_.dedup_switches;
  stats.preemptions = counters_.preemptions;
  stats.defragmentations = counters_.defragmentations;
  stats.pages_moved = counters_.pages_moved;
  stats.host_capacity = host_.capacity();
  stats.host_used = host_.used();

  const CacheFormatInfo& format = format_info(config_.format);
  const std::int64_t content_pages = counts_.referenced + counts_.cached;
  for (const CacheLayer& layer : config_.layers) {
    // The window pool counts its own layers.
    if (layer.device < 0 || (window_pool_ && layer.windowed)) continue;
    auto device = std::find_if(stats.devices.begin(), stats.devices.end(),
                               [&](const DeviceCacheBytes& d) { return d.device == layer.device; });
    if (device == stats.devices.end()) {
      stats.devices.push_back(DeviceCacheBytes{layer.device, 0, 0, 0});
      device = std::prev(stats.devices.end());
    }
    const std::int64_t page_bytes = format.page_bytes(layer.shape, config_.page_size).total();
    device->layers += 1;
    device->allocated_bytes += page_bytes * config_.num_pages;
    device->content_bytes += page_bytes * content_pages;
  }
  // The bytes on each device are the whole cache's: the window pool's
  // layers are there too.
  if (window_pool_) {
    for (const DeviceCacheBytes& pooled : window_pool_->stats().devices) {
      auto device =
          std::find_if(stats.devices.begin(), stats.devices.end(),
                       [&](const DeviceCacheBytes& d) { return d.device == pooled.device; });
      if (device == stats.devices.end()) {
        stats.devices.push_back(pooled);
        continue;
      }
      device->layers += pooled.layers;
      device->allocated_bytes += pooled.allocated_bytes;
      device->content_bytes += pooled.content_bytes;
    }
  }
  std::sort(
      stats.devices.begin(), stats.devices.end(),
      [](const DeviceCacheBytes& a, const DeviceCacheBytes& b) { return a.device < b.device; });
  return stats;
}

std::vector<PageInfo> PageCache::pages() const {
  std::vector<PageInfo> infos(pages_.size());
  for (PageIndex index = 0; index < config_.num_pages; ++index) {
    const PageRecord& page = this->page(index);
    PageInfo& info = infos[static_cast<std::size_t>(index)];
    info.index = index;
    info.state = page.state();
    info.refs = page.refs;
    info.valid_tokens = page.identity.valid;
    info.hashed = page.identity.hashed;
    info.hash = page.identity.hash;
    info.last_access = page.last_access;
    info.from_disk = page.from_disk;
  }
  for (const auto& [id, seq] : sequences_) {
    for (const PageIndex index : seq.pages) {
      if (index == kNoPage) continue;
      std::vector<SequenceId>& holders = infos[static_cast<std::size_t>(index)].holders;
      if (holders.empty() || holders.back() != id) holders.push_back(id);
    }
  }
  return infos;
}

}  // namespace quire::cache
