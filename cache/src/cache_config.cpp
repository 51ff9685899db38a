#include "quire/cache/cache_config.h"

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
  const CacheFormatInfo& info = format_info(format);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (auto reason = info.unsupported_reason(layers[i].shape)) {
      throw std::invalid_argument("cache layer " + std::to_string(i) + ": " + *reason);
    }
  }
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
