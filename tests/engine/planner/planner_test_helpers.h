#pragma once

// Small builders for placement requests. Byte counts in the tests are whole
// MiB wherever the arithmetic is meant to be checked by hand.

#include <QList>
#include <string>
#include <vector>

#include "quire/engine/planner/planner.h"

namespace quire::engine::testing {

inline constexpr std::int64_t MiB = kMiB;
inline constexpr std::int64_t GiB = kGiB;

inline ModuleCost embedding(std::int64_t weights) {
  return ModuleCost{"model.embed_tokens", ModuleKind::Embedding, weights, 0, 0};
}

inline ModuleCost layer(int i, std::int64_t weights, std::int64_t cache_per_page) {
  return ModuleCost{"model.layers." + std::to_string(i), ModuleKind::Layer, weights, cache_per_page,
                    0};
}

inline ModuleCost head(std::int64_t weights, std::int64_t logits_scratch) {
  return ModuleCost{"lm_head", ModuleKind::Head, weights, 0, logits_scratch};
}

inline PlanDevice device(int index, std::string name, std::int64_t free_bytes,
                         std::int64_t total_bytes = 0) {
  return PlanDevice{index, std::move(name), total_bytes > 0 ? total_bytes : free_bytes, free_bytes};
}

// Embedding, `layers` equal attention layers, head with its logits scratch.
inline std::vector<ModuleCost> simple_model(int layers, std::int64_t embed,
                                            std::int64_t layer_bytes, std::int64_t cache_per_page,
                                            std::int64_t head_bytes, std::int64_t logits) {
  std::vector<ModuleCost> modules{embedding(embed)};
  for (int i = 0; i < layers; ++i)
    modules.push_back(layer(i, layer_bytes, cache_per_page));
  modules.push_back(head(head_bytes, logits));
  return modules;
}

// "Model A" of the hand-checked tests: embedding 100 MiB, 4 layers of 200 MiB
// with 10 MiB of cache per page, head 150 MiB with 50 MiB of logits scratch,
// 64 MiB of device scratch; two devices with 1000 MiB free and a 36 MiB
// reserve each, so 964 MiB usable on each.
inline PlacementRequest model_a(std::int64_t context_tokens) {
  PlacementRequest request;
  request.modules = simple_model(4, 100 * MiB, 200 * MiB, 10 * MiB, 150 * MiB, 50 * MiB);
  request.device_scratch_bytes = 64 * MiB;
  request.context_tokens = context_tokens;
  request.page_size = 256;
  request.devices = {device(0, "A", 1000 * MiB, 1024 * MiB),
                     device(1, "B", 1000 * MiB, 1024 * MiB)};
  request.policy.default_reserve_bytes = 36 * MiB;
  return request;
}

// `count` equal layers without cache, embedding or head: the plainest input
// for checking how modules are spread.
inline std::vector<ModuleCost> layers_only(int count, std::int64_t bytes) {
  std::vector<ModuleCost> modules;
  for (int i = 0; i < count; ++i)
    modules.push_back(layer(i, bytes, 0));
  return modules;
}

inline QList<int> slots_of(const PlacementPlan& plan) {
  QList<int> result;
  for (const ModulePlacement& module : plan.modules)
    result.append(module.slot);
  return result;
}

inline QList<int> counts_of(const PlacementPlan& plan) {
  QList<int> counts;
  for (const DevicePlacement& device : plan.devices)
    counts.append(device.module_count);
  return counts;
}

inline bool fits_with(PlacementRequest request, std::int64_t tokens) {
  request.context_tokens = tokens;
  return plan_placement(request).fits;
}

}  // namespace quire::engine::testing
