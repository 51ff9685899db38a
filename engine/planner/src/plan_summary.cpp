#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "byte_math.h"
#include "plan_messages.h"
#include "quire/engine/planner/planner.h"

namespace quire::engine {
namespace {

using detail::human_bytes;

// "embedding, layers 0-15, head": layers are numbered by their position among
// the model's layers, the way people count them.
std::string describe_modules(const PlacementPlan& plan, int slot) {
  std::vector<std::string> parts;
  int layer = 0;
  int run_first = -1;
  int run_last = -1;
  const auto close_run = [&] {
    if (run_first < 0) return;
    parts.push_back(run_first == run_last
                        ? "layer " + std::to_string(run_first)
                        : "layers " + std::to_string(run_first) + "-" + std::to_string(run_last));
    run_first = -1;
  };
  for (const ModulePlacement& module : plan.modules) {
    const bool here = module.slot == slot;
    if (module.kind == ModuleKind::Layer) {
      if (here) {
        if (run_first < 0) run_first = layer;
        run_last = layer;
      } else {
        close_run();
      }
      ++layer;
      continue;
    }
    close_run();
    if (!here) continue;
    switch (module.kind) {
      case ModuleKind::Embedding:
        parts.emplace_back("embedding");
        break;
      case ModuleKind::Head:
        parts.emplace_back("head");
        break;
      default:
        parts.push_back(module.name);
        break;
    }
  }
  close_run();
  std::string text;
  for (const std::string& part : parts)
    text += (text.empty() ? "" : ", ") + part;
  return text;
}

std::string verdict(const PlacementPlan& plan) {
  std::string line =
      std::string(to_string(plan.mode)) + ", " + std::to_string(plan.context_tokens) +
      "-token context (" + std::to_string(plan.pages) + " pages of " +
      std::to_string(plan.page_size) +
      (plan.window_pool_pages > 0 ? "; the sliding layers' window pool " +
                                        std::to_string(plan.window_pool_pages) + " pages"
                                  : std::string()) +
      "): ";
  if (!plan.fits) return line + plan.problem;
  line += "fits";
  if (plan.largest_context) {
    const ContextLimit& largest = *plan.largest_context;
    if (largest.model_limit) {
      line += "; largest context " + std::to_string(largest.tokens) + " tokens: the model's limit";
      if (largest.window_bounded) line += " (its sliding window keeps a conversation's pages few)";
    } else {
      line += largest.pages == std::numeric_limits<int>::max()
                  ? "; the context is not limited by memory"
                  : "; largest context " + std::to_string(largest.tokens) + " tokens";
    }
  }
  return line;
}

std::string device_line(const PlacementPlan& plan, std::size_t slot) {
  const DevicePlacement& device = plan.devices[slot];
  std::string line = "  " + detail::device_label(device) + ": ";
  const std::string budget =
      "free " + human_bytes(device.free_before) + ", reserve " + human_bytes(device.reserve) +
      (device.limited_by_manual ? ", limit " + human_bytes(device.usable) : std::string());
  if (!device.used()) return line + "unused — " + budget;
  const std::string staging =
      device.staging > 0 ? ", cache staging " + human_bytes(device.staging) : std::string();
  std::string holds = describe_modules(plan, static_cast<int>(slot));
  if (device.fixed_cache) holds += holds.empty() ? "KV cache only" : ", KV cache";
  return line + holds + " — weights " + human_bytes(device.weights) + ", cache " +
         human_bytes(device.cache) + staging + ", scratch " + human_bytes(device.scratch) + "; " +
         budget + ", left " + human_bytes(device.free_after);
}

// "  host memory: cache 3.00 GiB; free 60.0 GiB, reserve 1.00 GiB; each decode
// step copies 96.0 MiB, about 7.7 ms at 12.5 GB/s measured".
std::string host_line(const PlacementPlan& plan) {
  const HostCachePlacement& host = *plan.host_cache;
  std::string line = "  host memory (" + std::string(to_string(plan.cache_residence)) +
                     "): cache " + human_bytes(host.bytes);
  if (host.free_before > 0) {
    line += "; free " + human_bytes(host.free_before) + ", reserve " + human_bytes(host.reserve);
  }
  line += "; a decode step at this context copies " + human_bytes(host.copy_bytes_per_step);
  if (host.seconds_per_step > 0) {
    char speed[96];
    std::snprintf(speed, sizeof speed, ", about %.1f ms more per token at %.1f GB/s measured",
                  host.seconds_per_step * 1e3, host.copy_bytes_per_second / 1e9);
    line += speed;
  }
  return line;
}

// "  vision tower (SigLIP tower, Gemma 3 projector) in host memory: weights
// 812 MiB, 289 MiB to read an image; 20.1 GiB of host memory left for it",
// the reserve and the rest of the plan taken off; or
// why it cannot be held.
std::string vision_tower_line(const VisionTowerPlacement& tower) {
  std::string line = "  vision tower (" + tower.name + ") in host memory: ";
  if (!tower.fits) return line + tower.problem;
  line += "weights " + human_bytes(tower.weight_bytes) + ", " + human_bytes(tower.scratch_bytes) +
          " to read an image";
  if (tower.usable >= 0) line += "; " + human_bytes(tower.usable) + " of host memory left for it";
  return line;
}

}  // namespace

std::string describe_plan(const PlacementPlan& plan) {
  std::string text = verdict(plan) + "\n";
  for (std::size_t slot = 0; slot < plan.devices.size(); ++slot) {
    text += device_line(plan, slot) + "\n";
  }
  if (plan.cache_slot >= 0) {
    const DevicePlacement& device = plan.devices[static_cast<std::size_t>(plan.cache_slot)];
    text += "  KV cache on device " + std::to_string(device.index) +
            " (fixed): every attention layer's pages, " + human_bytes(device.cache) +
            ", wherever the layer's weights are\n";
  }
  if (plan.host_cache) text += host_line(plan) + "\n";
  if (plan.vision_tower) text += vision_tower_line(*plan.vision_tower) + "\n";
  for (const std::string& note : plan.notes)
    text += "  note: " + note + "\n";
  return text;
}

}  // namespace quire::engine
