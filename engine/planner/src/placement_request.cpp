#include "quire/engine/planner/placement_request.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace quire::engine {
namespace {

void check_bytes(std::int64_t bytes, const std::string& what) {
  if (bytes < 0) {
    throw std::invalid_argument(what + " is negative (" + std::to_string(bytes) + " bytes)");
  }
  if (bytes > kMaxPlanBytes) {
    throw std::invalid_argument(what + " is " + std::to_string(bytes) +
                                " bytes, more than any device holds (at most 2^60)");
  }
}

}  // namespace

std::int64_t PlacementPolicy::reserve_for(std::size_t position) const {
  return position < reserve_bytes.size() ? reserve_bytes[position] : default_reserve_bytes;
}

std::int64_t pages_for_tokens(std::int64_t tokens, int page_size) {
  if (tokens <= 0 || page_size <= 0) return 0;
  return tokens / page_size + (tokens % page_size > 0 ? 1 : 0);
}

void PlacementRequest::validate() const {
  if (page_size <= 0) throw std::invalid_argument("cache page size must be positive");
  if (context_tokens < 0) throw std::invalid_argument("context size must not be negative");
  if (window_pages < 0) throw std::invalid_argument("window pages must not be negative");
  if (window_pool_pages < 0) {
    throw std::invalid_argument("window pool pages must not be negative");
  }
  if (model_context_tokens < 0) {
    throw std::invalid_argument("the model's context limit must not be negative");
  }
  if (pages_for_tokens(context_tokens, page_size) > std::numeric_limits<int>::max()) {
    throw std::invalid_argument("a context of " + std::to_string(context_tokens) +
                                " tokens needs more pages than a cache can address");
  }
  check_bytes(device_scratch_bytes, "device scratch");
  for (const ModuleCost& module : modules) {
    const std::string what = "module '" + module.name + "'";
    check_bytes(module.weight_bytes, what + " weight size");
    check_bytes(module.cache_bytes_per_page, what + " cache bytes per page");
    check_bytes(module.extra_scratch_bytes, what + " extra scratch");
  }
  for (const PlanDevice& device : devices) {
    const std::string what = "device " + std::to_string(device.index);
    check_bytes(device.total_bytes, what + " total memory");
    check_bytes(device.free_bytes, what + " free memory");
  }
  if (cache_device && (*cache_device < 0 || *cache_device >= static_cast<int>(devices.size()))) {
    throw std::invalid_argument("the KV cache device is position " + std::to_string(*cache_device) +
                                ", and there are " + std::to_string(devices.size()) + " devices");
  }
  if (staging_slots < 2) throw std::invalid_argument("a staging ring needs at least 2 slots");
  if (host) {
    check_bytes(host->free_bytes, "host free memory");
    check_bytes(host->reserve_bytes, "host reserve");
  }
  if (vision_tower) {
    check_bytes(vision_tower->weight_bytes, "vision tower weights");
    check_bytes(vision_tower->scratch_bytes, "vision tower scratch");
  }
  check_bytes(policy.default_reserve_bytes, "default reserve");
  for (std::size_t i = 0; i < policy.reserve_bytes.size(); ++i) {
    check_bytes(policy.reserve_bytes[i], "reserve of device position " + std::to_string(i));
  }
  for (std::size_t i = 0; i < policy.manual_limit_bytes.size(); ++i) {
    check_bytes(policy.manual_limit_bytes[i],
                "manual limit of device position " + std::to_string(i));
  }
}

const char* to_string(CacheResidence residence) {
  switch (residence) {
    case CacheResidence::Device:
      return "on the devices";
    case CacheResidence::Offloaded:
      return "offloaded to host memory";
    case CacheResidence::OffloadGlobalLayers:
      return "global layers offloaded to host memory";
  }
  return "?";
}

const char* to_string(PlacementMode mode) {
  switch (mode) {
    case PlacementMode::FillInOrder:
      return "fill in order";
    case PlacementMode::Balanced:
      return "balanced";
    case PlacementMode::Manual:
      return "manual";
  }
  return "?";
}

const char* to_string(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::Embedding:
      return "embedding";
    case ModuleKind::Layer:
      return "layer";
    case ModuleKind::Head:
      return "head";
    case ModuleKind::Other:
      return "other";
  }
  return "?";
}

}  // namespace quire::engine
