#include "shadow_engine.h"

#include <algorithm>

namespace quire::test {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

using namespace cache;

ShadowEngine::ShadowEngine(PageCache& cache)
    : cache_(cache),
      page_size_(cache.page_size()),
      device_(static_cast<std::size_t>(cache.num_pages())),
      host_(static_cast<std::size_t>(cache.config().host_pages)) {
  device_ = junk_pages(cache.num_pages());
  host_ = junk_pages(cache.config().host_pages);
  if (cache.window_pool()) window_device_ = junk_pages(cache.window_pool()->num_pages());
}

ShadowEngine::~ShadowEngine() {
  if (disk_attached_ && cache_.disk() == this) cache_.attach_disk(nullptr);
}

void ShadowEngine::attach_disk(Disk disk) {
  disk_ = std::move(disk);
  disk_attached_ = true;
  cache_.attach_disk(this);
}

ShadowEngine::Pages ShadowEngine::junk_pages(int count) {
  Pages pages(static_cast<std::size_t>(count));
  for (auto& page : pages) {
    page.resize(static_cast<std::size_t>(page_size_));
    for (auto& value : page)
      value = junk();
  }
  return pages;
}

std::uint64_t ShadowEngine::junk() {
  junk_state_ = mix(junk_state_);
  return junk_state_;
}

std::vector<std::uint64_t> ShadowEngine::fingerprints(std::span<const TokenId> tokens) {
  std::vector<std::uint64_t> result(tokens.size());
  std::uint64_t state = 0x1234abcdull;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    state = mix(state ^ (static_cast<std::uint64_t>(tokens[i]) * 0x100000001b3ull + i));
    result[i] = state;
  }
  return result;
}

void ShadowEngine::execute_saves(std::span<const HostSave> saves,
                                 std::span<const DiskSave> disk_saves) {
  for (const HostSave& save : saves) {
    host_[static_cast<std::size_t>(save.slot)] = device_[static_cast<std::size_t>(save.page)];
  }
  for (const DiskSave& save : disk_saves)
    disk_[save.hash] = device_[static_cast<std::size_t>(save.page)];
}

void ShadowEngine::execute(const CacheInstructions& instructions) {
  execute_saves(instructions.saves, instructions.disk_saves);
  for (const HostRestore& restore : instructions.restores) {
    device_[static_cast<std::size_t>(restore.page)] = host_[static_cast<std::size_t>(restore.slot)];
  }
  for (const DiskRestore& restore : instructions.disk_restores) {
    auto stored = disk_.find(restore.hash);
    if (stored == disk_.end()) {
      failed_restores_.push_back(restore);
      device_[static_cast<std::size_t>(restore.page)] = junk_pages(1).front();
      continue;
    }
    device_[static_cast<std::size_t>(restore.page)] = stored->second;
  }
  for (const PageCopy& copy : instructions.copies) {
    const auto& source = device_[static_cast<std::size_t>(copy.source)];
    auto& target = device_[static_cast<std::size_t>(copy.destination)];
    std::copy_n(source.begin(), copy.tokens, target.begin());
  }
  for (const PageCopy& copy : instructions.window_copies) {
    const auto& source = window_device_[static_cast<std::size_t>(copy.source)];
    auto& target = window_device_[static_cast<std::size_t>(copy.destination)];
    std::copy_n(source.begin(), copy.tokens, target.begin());
  }
}

AppendResult ShadowEngine::compute(SequenceId sequence, TokenRange range) {
  // With a window, a step computes at most the configured positions, as the
  // generator's prefill chunks do.
  const CacheConfig& config = cache_.config();
  const bool windowed = config.window > 0 || config.has_window_pool();
  const std::int32_t step = !windowed                    ? range.end - range.begin
                            : config.max_step_tokens > 0 ? config.max_step_tokens
                                                         : config.page_size;
  AppendResult result;
  for (std::int32_t begin = range.begin; begin < range.end; begin += step) {
    const std::int32_t end = std::min(range.end, begin + step);
    AppendResult taken = cache_.ensure_pages(sequence, end);
    execute_saves(taken.saves, taken.disk_saves);
    result.preempted.insert(result.preempted.end(), taken.preempted.begin(), taken.preempted.end());
    if (taken.status != AppendStatus::Appended) {
      result.status = taken.status;
      return result;
    }
    const std::span<const PageIndex> table = cache_.page_table(sequence);
    const std::vector<std::uint64_t> expected = fingerprints(cache_.tokens(sequence));
    const auto write = [&](Pages& pages, std::span<const PageIndex> pool_table) {
      for (std::int32_t position = begin; position < end; ++position) {
        const PageIndex page = pool_table[static_cast<std::size_t>(position / page_size_)];
        pages[static_cast<std::size_t>(page)][static_cast<std::size_t>(position % page_size_)] =
            expected[static_cast<std::size_t>(position)];
      }
    };
    write(device_, table);
    if (cache_.window_pool()) write(window_device_, cache_.window_page_table(sequence));
    cache_.mark_computed(sequence, end);
  }
  return result;
}

void ShadowEngine::prefill(const Admission& admission) {
  execute(admission.instructions);
  for (const TokenRange& range : admission.compute) {
    if (compute(admission.sequence, range).status != AppendStatus::Appended) return;
  }
}

AppendResult ShadowEngine::decode(SequenceId sequence, TokenId token) {
  const TokenId tokens[] = {token};
  AppendResult result = cache_.append(sequence, tokens);
  execute_saves(result.saves, result.disk_saves);
  if (result.status == AppendStatus::Appended) {
    const auto end = static_cast<std::int32_t>(cache_.tokens(sequence).size());
    compute(sequence, TokenRange{end - 1, end});
  }
  return result;
}

AppendResult ShadowEngine::speculate(SequenceId sequence, std::span<const TokenId> tokens,
                                     std::int32_t keep) {
  AppendResult result = cache_.append(sequence, tokens);
  execute_saves(result.saves, result.disk_saves);
  if (result.status != AppendStatus::Appended) return result;
  const auto end = static_cast<std::int32_t>(cache_.tokens(sequence).size());
  const std::int32_t begin = end - static_cast<std::int32_t>(tokens.size());
  const std::vector<std::uint64_t> written = fingerprints(cache_.tokens(sequence));
  const auto write = [&](Pages& pages, std::span<const PageIndex> table) {
    for (std::int32_t position = begin; position < end; ++position) {
      const PageIndex page = table[static_cast<std::size_t>(position / page_size_)];
      pages[static_cast<std::size_t>(page)][static_cast<std::size_t>(position % page_size_)] =
          written[static_cast<std::size_t>(position)];
    }
  };
  write(device_, cache_.page_table(sequence));
  if (cache_.window_pool()) write(window_device_, cache_.window_page_table(sequence));
  cache_.truncate(sequence, begin + keep);
  cache_.mark_computed(sequence, begin + keep);
  return result;
}

void ShadowEngine::apply(const DefragPlan& plan) {
  PageMoveOps ops;
  ops.copy = [this](PageIndex from, PageIndex to) {
    device_[static_cast<std::size_t>(to)] = device_[static_cast<std::size_t>(from)];
    device_[static_cast<std::size_t>(from)].assign(static_cast<std::size_t>(page_size_), junk());
  };
  ops.to_buffer = [this](PageIndex from) { buffer_ = device_[static_cast<std::size_t>(from)]; };
  ops.from_buffer = [this](PageIndex to) { device_[static_cast<std::size_t>(to)] = buffer_; };
  execute_page_moves(plan.moves, ops);
}

std::string ShadowEngine::verify_table(const PageCache& pool, const Pages& pages,
                                       std::span<const PageIndex> table, SequenceId sequence,
                                       std::int32_t window, ByHash& by_hash) {
  const std::vector<std::uint64_t> expected = fingerprints(cache_.tokens(sequence));
  const std::int32_t computed = cache_.computed(sequence);
  // With a window, only the pages the next query reads are held.
  const std::int32_t first_key = window == 0 ? 0 : std::max(0, computed - window + 1);
  for (std::int32_t position = first_key / page_size_ * page_size_; position < computed;
       ++position) {
    const PageIndex page = table[static_cast<std::size_t>(position / page_size_)];
    if (page == kNoPage) {
      return "sequence " + std::to_string(sequence) + " has no page for position " +
             std::to_string(position) + ", within its window";
    }
    if (pages[static_cast<std::size_t>(page)][static_cast<std::size_t>(position % page_size_)] !=
        expected[static_cast<std::size_t>(position)]) {
      return "sequence " + std::to_string(sequence) + " reads wrong K/V at position " +
             std::to_string(position) + " (page " + std::to_string(page) + ")";
    }
  }
  // Remember the content of every full hashed page, to check cached pages later.
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i] == kNoPage) continue;
    const PageRecord& record = pool.page(table[i]);
    if (!record.identity.hashed || record.identity.valid != page_size_) continue;
    const auto& content = pages[static_cast<std::size_t>(table[i])];
    auto [where, inserted] = by_hash.emplace(record.identity.hash, content);
    if (!inserted && where->second != content) {
      return "page " + std::to_string(table[i]) + " holds other content than its hash had before";
    }
  }
  return {};
}

std::string ShadowEngine::verify_sequence(SequenceId sequence) {
  std::string problem = verify_table(cache_, device_, cache_.page_table(sequence), sequence,
                                     cache_.config().window, by_hash_);
  if (problem.empty() && cache_.window_pool()) {
    problem =
        verify_table(*cache_.window_pool(), window_device_, cache_.window_page_table(sequence),
                     sequence, cache_.config().layer_window, window_by_hash_);
    if (!problem.empty()) problem = "window pool: " + problem;
  }
  return problem;
}

std::string ShadowEngine::verify_pool(const PageCache& pool, const Pages& pages,
                                      const ByHash& by_hash) {
  for (PageIndex page = 0; page < pool.num_pages(); ++page) {
    const PageRecord& record = pool.page(page);
    if (record.state() != PageState::Cached || !record.identity.hashed) continue;
    auto known = by_hash.find(record.identity.hash);
    if (known != by_hash.end() && known->second != pages[static_cast<std::size_t>(page)]) {
      return "cached page " + std::to_string(page) + " does not hold the content of its hash";
    }
  }
  return {};
}

std::string ShadowEngine::verify_cached_pages() const {
  std::string problem = verify_pool(cache_, device_, by_hash_);
  if (problem.empty() && cache_.window_pool()) {
    problem = verify_pool(*cache_.window_pool(), window_device_, window_by_hash_);
    if (!problem.empty()) problem = "window pool: " + problem;
  }
  return problem;
}

}  // namespace quire::test
