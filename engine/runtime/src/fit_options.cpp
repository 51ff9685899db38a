#include "quire/engine/runtime/fit_options.h"

#include <algorithm>
#include <array>
#include <string>

namespace quire::engine {
namespace {

// Largest first: the order in which a cache gives up exactness for room.
constexpr std::array<cache::CacheFormat, 4> kShrinking = {
    cache::CacheFormat::FP16, cache::CacheFormat::Q8, cache::CacheFormat::Q6,
    cache::CacheFormat::Q4};

const char* cost_of(cache::CacheFormat format) {
  if (format == cache::CacheFormat::Q8) return "about 1% less exact";
  if (format == cache::CacheFormat::Q6) return "a little less exact than q8";
  if (format == cache::CacheFormat::Q4) return "less exact, most at long context";
  return "";
}

std::string name_of(cache::CacheFormat format) {
  return std::string(cache::format_info(format).name);
}

}  // namespace

std::optional<FitSuggestion> suggest_fit(const ModelDescription& model,
                                         std::span<const kernels::DeviceInfo> devices,
                                         const RuntimeOptions& options) {
  const PlacementRequest request = placement_request(model, devices, options);
  // Only codings that store fewer bits than the chosen one are offered: after
  // FP8 (8 bits per element) Q6 and Q4, after FP8 keys with Q4 values (6.25)
  // Q4 alone.
  const double bits = cache::format_info(options.cache_format).bits_per_element();
  std::vector<CacheCoding> smaller;
  for (const cache::CacheFormat format : kShrinking) {
    const cache::CacheFormatInfo& info = cache::format_info(format);
    if (info.bits_per_element() >= bits || info.unsupported_reason(model.kv_shape())) continue;
    CacheCoding coding{name_of(format), cost_of(format), {}, {}};
    // Priced as a request in that coding would be: its pages, and the
    // residual window a coded cache adds.
    RuntimeOptions recoded = options;
    recoded.cache_format = format;
    for (const ModuleCost& module : placement_request(model, devices, recoded).modules) {
      coding.cache_bytes_per_page.push_back(module.cache_bytes_per_page);
      coding.cache_fixed_bytes.push_back(module.cache_fixed_bytes);
    }
    smaller.push_back(std::move(coding));
  }
  std::optional<FitSuggestion> suggestion =
      suggest_fit(request, name_of(options.cache_format), smaller);
  if (suggestion && options.cache_residence == CacheResidence::Device) {
    RuntimeOptions offloaded = options;
    offloaded.cache_residence = CacheResidence::Offloaded;
    // Priced without measuring the copy speed: only whether it fits counts here.
    if (plan_placement(placement_request(model, devices, offloaded)).fits) {
      suggestion->alternative =
          "the whole cache kept in host memory (slower: every step streams it to the device)";
    }
  }
  return suggestion;
}

RuntimeOptions with_fit(RuntimeOptions options, const FitSuggestion& suggestion) {
  switch (suggestion.kind) {
    case FitSuggestion::Kind::SmallerCoding:
      options.cache_format = *cache::parse_cache_format(suggestion.coding);
      break;
    case FitSuggestion::Kind::SmallerCache:
      options.cache_tokens = suggestion.context_tokens;
      break;
  }
  return options;
}

}  // namespace quire::engine
