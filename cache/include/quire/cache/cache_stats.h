#pragma once

#include <cstdint>
#include <vector>

#include "quire/cache/page_record.h"

namespace quire::cache {

// Cache bytes on one device: storage allocated for the layers placed there, and
// the part of it holding live content (referenced or cached pages).
struct DeviceCacheBytes {
  int device = -1;
  int layers = 0;
  std::int64_t allocated_bytes = 0;
  std::int64_t content_bytes = 0;

  friend bool operator==(const DeviceCacheBytes&, const DeviceCacheBytes&) = default;
};

// A snapshot for the UI and the benchmarks.
struct CacheStats {
  int page_size = 0;
  int total_pages = 0;
  int free_pages = 0;
  int referenced_pages = 0;
  int cached_pages = 0;
  int shared_pages = 0;  // referenced by more than one sequence
  int sequences = 0;

  // Prompt tokens admitted, and how each was obtained.
  std::int64_t prompt_tokens = 0;
  std::int64_t reused_tokens = 0;         // pages shared or revived by hash
  std::int64_t copied_tokens = 0;         // partial pages copied from a cached sibling
  std::int64_t restored_tokens = 0;       // pages brought back from the host tier
  std::int64_t disk_restored_tokens = 0;  // pages read back from the disk tier
  std::int64_t computed_tokens = 0;       // left to compute
  std::int64_t generated_tokens = 0;      // appended during decode
  // Sequences made by PageCache::branch; their tokens count as prompt tokens,
  // shared ones as reused and the copied part of the open page as copied.
  std::int64_t branches = 0;

  std::int64_t evictions = 0;
  std::int64_t host_saves = 0;
  std::int64_t host_restores = 0;
  std::int64_t host_evictions = 0;
  std::int64_t disk_saves = 0;     // evicted pages given to the disk tier
  std::int64_t disk_restores = 0;  // pages read back from it
  std::int64_t dedup_switches = 0;
  std::int64_t preemptions = 0;
  std::int64_t defragmentations = 0;
  std::int64_t pages_moved = 0;

  int host_capacity = 0;
  int host_used = 0;

  std::vector<DeviceCacheBytes> devices;

  std::int64_t served_tokens() const {
    return reused_tokens + copied_tokens + restored_tokens + disk_restored_tokens;
  }
  // Fraction of admitted prompt tokens that did not have to be computed.
  double hit_rate() const {
    return prompt_tokens == 0
               ? 0.0
               : static_cast<double>(served_tokens()) / static_cast<double>(prompt_tokens);
  }
};

// One cell of the page map.
struct PageInfo {
  PageIndex index = kNoPage;
  PageState state = PageState::Free;
  std::int32_t refs = 0;
  std::int32_t valid_tokens = 0;
  bool hashed = false;
  PageHash hash;
  std::uint64_t last_access = 0;
  bool from_disk = false;  // its content was read back from the disk tier
  std::vector<SequenceId> holders;
};

}  // namespace quire::cache
