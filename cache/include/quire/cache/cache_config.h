#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quire/cache/cache_format.h"

namespace quire::cache {

// How a job's pages are obtained.
enum class ReservationPolicy : std::uint8_t {
  // Every page a job may need (prompt + max new tokens) is reserved when it is
  // admitted, as exllamav2 does: no surprises mid-generation.
  ReserveOnAdmission,
  // Only the prompt's pages are taken at admission; decode takes pages as it
  // needs them and, when none can be had, the youngest job is preempted.
  OnDemand,
};

// One attention layer's share of the cache, for byte accounting. The device is
// -1 until the autosplit has placed the layer (its storage is allocated lazily).
struct CacheLayer {
  LayerShape shape;
  int device = -1;
  // The layer slides over CacheConfig::layer_window positions and takes its
  // pages from the window pool.
  bool windowed = false;
};

struct CacheConfig {
  int page_size = 256;
  int num_pages = 0;
  ReservationPolicy reservation = ReservationPolicy::ReserveOnAdmission;
  // Pages of the host-memory tier; 0 disables it.
  int host_pages = 0;
  // A defragmentation that would move at most this fraction of the pages is skipped.
  double defrag_skip_fraction = 0.10;
  // A partial page is copied from a cached sibling only if at least this many
  // leading tokens match.
  int min_copy_tokens = 1;
  CacheFormat format = CacheFormat::FP16;
  std::vector<CacheLayer> layers;
  // Every attention layer attends to at most this many positions (a query at p
  // reads keys p - window + 1 .. p); 0: all. Pages wholly before a sequence's
  // window go back to the cache under their hash, so a sequence holds at most
  // window + one step + one page of pages however long it grows.
  int window = 0;
  // The most positions of one sequence computed in one step (the prefill
  // chunk); with a window it bounds the pages a sequence holds at once.
  // 0: one page.
  int max_step_tokens = 0;
  // Mixed models (Gemma 2, Gemma 3): the layers marked CacheLayer::windowed
  // attend to at most this many positions, the others to all. Their pages
  // come from a pool of their own of `window_pages` pages, with a page table
  // per sequence bounded by this window as `window` bounds every layer's,
  // while the other layers keep every page (page_cache_pools.cpp). 0: one
  // pool for every layer. Needs `window` 0.
  int layer_window = 0;
  int window_pages = 0;

  // Pages a sequence of `tokens` positions holds at most at once: all of them
  // without a window, else those spanning its window and one step.
  std::int64_t pages_held_at_most(std::int64_t tokens) const;

  bool has_window_pool() const { return layer_window > 0; }
  // The configuration of the window pool: this one's settings with the
  // layer window as its window, `window_pages` pages and no host tier; its
  // layers are this one's, those outside the pool never placed.
  CacheConfig window_pool() const;

  // Throws std::invalid_argument naming the first setting that is out of range.
  void validate() const;
};

const char* to_string(ReservationPolicy policy);

}  // namespace quire::cache
