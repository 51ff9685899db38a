#include "quire/engine/planner/fit_suggestion.h"

#include <algorithm>
#include <stdexcept>

#include "quire/engine/planner/planner.h"

namespace quire::engine {

std::string group_thousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return value < 0 ? "-" + digits : digits;
}

std::optional<FitSuggestion> suggest_fit(const PlacementRequest& request,
                                         const std::string& current,
                                         const std::vector<CacheCoding>& smaller) {
  const PlacementPlan plan = plan_placement(request);
  if (plan.fits || !plan.largest_context) return std::nullopt;

  // A smaller coding keeps every token the user asked for, so it comes first.
  for (const CacheCoding& coding : smaller) {
    if (coding.cache_bytes_per_page.size() != request.modules.size()) {
      throw std::invalid_argument("cache coding " + coding.name + " prices " +
                                  std::to_string(coding.cache_bytes_per_page.size()) +
                                  " modules of " + std::to_string(request.modules.size()));
    }
    if (!coding.cache_fixed_bytes.empty() &&
        coding.cache_fixed_bytes.size() != request.modules.size()) {
      throw std::invalid_argument("cache coding " + coding.name + " prices the fixed bytes of " +
                                  std::to_string(coding.cache_fixed_bytes.size()) + " modules of " +
                                  std::to_string(request.modules.size()));
    }
    PlacementRequest recoded = request;
    for (std::size_t i = 0; i < recoded.modules.size(); ++i) {
      recoded.modules[i].cache_bytes_per_page = coding.cache_bytes_per_page[i];
      if (!coding.cache_fixed_bytes.empty())
        recoded.modules[i].cache_fixed_bytes = coding.cache_fixed_bytes[i];
    }
    if (!plan_placement(recoded).fits) continue;
    FitSuggestion suggestion;
    suggestion.kind = FitSuggestion::Kind::SmallerCoding;
    suggestion.coding = coding.name;
    suggestion.context_tokens = plan.context_tokens;
    suggestion.change = "cache stored as " + coding.name + " instead of " + current +
                        (coding.cost.empty() ? "" : " (" + coding.cost + ")");
    suggestion.label = coding.name + " cache";
    return suggestion;
  }

  // The cache is shared by every conversation, so its size is bounded by
  // memory alone, not by what one conversation reads (the model's limit or a
  // sliding window); a cache of no pages is no suggestion.
  PlacementRequest unbounded = request;
  unbounded.model_context_tokens = 0;
  unbounded.window_pages = 0;
  const std::optional<ContextLimit> largest = plan_placement(unbounded).largest_context;
  if (!largest) return std::nullopt;
  const std::int64_t tokens = std::min(largest->pages, plan.pages - 1) * request.page_size;
  if (tokens <= 0) return std::nullopt;
  FitSuggestion suggestion;
  suggestion.kind = FitSuggestion::Kind::SmallerCache;
  suggestion.context_tokens = tokens;
  suggestion.change = "cache reduced from " + group_thousands(plan.context_tokens) + " to " +
                      group_thousands(tokens) + " tokens";
  suggestion.label = "a " + group_thousands(tokens) + "-token cache";
  return suggestion;
}

}  // namespace quire::engine
