#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quire/engine/planner/placement_plan.h"
#include "quire/engine/planner/placement_request.h"

namespace quire::engine {

// Another way to store the cache, as the planner prices it. The planner knows
// no cache formats: the caller prices each one for the request's modules.
struct CacheCoding {
  std::string name;  // "q8"
  std::string cost;  // what is given up, for people: "about 1% less exact"
  // One per request module, in the request's order (ModuleCost::cache_bytes_per_page).
  std::vector<std::int64_t> cache_bytes_per_page;
  // The same for ModuleCost::cache_fixed_bytes (a coded cache's residual
  // window); empty: the request's own.
  std::vector<std::int64_t> cache_fixed_bytes;
};

// The nearest setting that fits when a plan does not.
struct FitSuggestion {
  enum class Kind : std::uint8_t {
    SmallerCoding,  // the same cache in the coding `coding`
    SmallerCache,   // fewer tokens of cache: `context_tokens`, whole pages
  };
  Kind kind = Kind::SmallerCoding;
  std::string coding;               // SmallerCoding: the coding's name
  std::int64_t context_tokens = 0;  // the cache's tokens with the suggestion
  // "cache stored as q8 instead of fp16 (about 1% less exact)",
  // "cache reduced from 32,768 to 12,288 tokens".
  std::string change;
  // For a button: "q8 cache", "a 12,288-token cache".
  std::string label;
  // Another way that fits while keeping the whole cache as it is, for
  // people; empty when there is none (engine/runtime's suggest_fit offers the
  // cache kept in host memory).
  std::string alternative;
};

// For a request whose plan does not fit: the first of `smaller` (in order of
// preference, each smaller than the request's coding `current`) with which
// the whole requested cache fits, else the largest whole-page cache that fits
// in the current coding. Nothing when the plan fits, when not even the
// weights fit, or when no cache at all fits.
std::optional<FitSuggestion> suggest_fit(const PlacementRequest& request,
                                         const std::string& current,
                                         const std::vector<CacheCoding>& smaller);

// 32768 -> "32,768".
std::string group_thousands(std::int64_t value);

}  // namespace quire::engine
