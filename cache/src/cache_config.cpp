#include "quire/cache/cache_config.h"

#include <algorithm>
#include <stdexcept>

namespace quire::cache {

void CacheConfig::validate() const {
  if (page_size <= 0) throw std::invalid_argument("cache page size must be positive");
  if (num_pages <= 0) throw std::invalid_argument("the cache needs at least one page");
  if (host_pages < 0) throw std::invalid_argument("host tier size must not be negative");
  if (defrag_skip_fraction < 0.0 || defrag_skip_fraction > 1.0) {
    throw std::invalid_argument("defragmentation skip fraction must lie between 0 and 1");
  }
  if (min_copy_tokens < 1) throw std::invalid_argument("minimum copied tokens must be at least 1");
  if (window < 0) throw std::invalid_argument("the attention window must not be negative");
  if (max_step_tokens < 0) throw std::invalid_argument("tokens per step must not be negative");
  if (layer_window < 0) throw std::invalid_argument("the layer window must not be negative");
  if (window_pages < 0) throw std::invalid_argument("window pool pages must not be negative");
  if (layer_window > 0 && window > 0) {
    throw std::invalid_argument("a cache whose every layer slides has no window pool");
  }
  if (layer_window > 0 && window_pages == 0) {
    throw std::invalid_argument("the window pool needs at least one page");
  }
  const CacheFormatInfo& info = format_info(format);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (auto reason = info.unsupported_reason(layers[i].shape)) {
      throw std::invalid_argument("cache layer " + std::to_string(i) + ": " + *reason);
    }
  }
}

std::int64_t CacheConfig::pages_held_at_most(std::int64_t tokens) const {
  const std::int64_t all = (tokens + page_size - 1) / page_size;
  if (window == 0) return all;
  // A step's first query reads window - 1 earlier keys; the span of window - 1
  // + step positions touches at most this many pages wherever it starts.
  const std::int64_t step = max_step_tokens > 0 ? max_step_tokens : page_size;
  const std::int64_t span = std::int64_t{window} - 1 + step;
  return std::min(all, (span + page_size - 1) / page_size + 1);
}

CacheConfig CacheConfig::window_pool() const {
  CacheConfig pool = *this;
  pool.num_pages = window_pages;
  pool.host_pages = 0;
  pool.window = layer_window;
  pool.layer_window = 0;
  pool.window_pages = 0;
  for (CacheLayer& layer : pool.layers) {
    if (!layer.windowed) layer.device = -1;
  }
  return pool;
}

const char* to_string(ReservationPolicy policy) {
  switch (policy) {
    case ReservationPolicy::ReserveOnAdmission:
      return "reserve on admission";
    case ReservationPolicy::OnDemand:
      return "on demand";
  }
  return "?";
}

}  // namespace quire::cache
