#include <algorithm>
#include <cstddef>
#include <limits>

#include "byte_math.h"
#include "packing.h"
#include "plan_messages.h"
#include "quire/engine/planner/planner.h"
#include "vision_tower_placement.h"

namespace quire::engine {
namespace {

using detail::add_sat;
using detail::ModuleNeed;
using detail::Packing;
using detail::Prepaid;

// A cache's page count is an int (cache::CacheConfig::num_pages).
constexpr std::int64_t kMaxPages = std::numeric_limits<int>::max();

std::string mib_text(std::int64_t whole) {
  return std::to_string(whole) + " MiB";
}

// Reserve, usable memory and the notes they call for; independent of the
// context, so the largest-context search reuses them.
std::vector<DevicePlacement> budget_devices(const PlacementRequest& request,
                                            std::vector<std::string>& notes) {
  const PlacementPolicy& policy = request.policy;
  std::vector<DevicePlacement> devices;
  for (std::size_t i = 0; i < request.devices.size(); ++i) {
    const PlanDevice& source = request.devices[i];
    DevicePlacement device;
    device.index = source.index;
    device.name = source.name;
    device.total_bytes = source.total_bytes;
    device.free_before = source.free_bytes;
    device.reserve = policy.reserve_for(i);
    const std::int64_t after_reserve =
        std::max<std::int64_t>(0, source.free_bytes - device.reserve);
    device.usable = after_reserve;
    const std::string label = detail::device_label(device);
    if (after_reserve == 0) {
      notes.push_back(label + ": " + mib_text(detail::mib_floor(source.free_bytes)) +
                      " free is no more than its " + detail::mib_exact_or_decimal(device.reserve) +
                      " MiB reserve; not used");
    } else if (policy.mode == PlacementMode::Manual) {
      if (i >= policy.manual_limit_bytes.size()) {
        device.usable = 0;
        notes.push_back(label + ": no manual limit given; not used");
      } else if (policy.manual_limit_bytes[i] < after_reserve) {
        device.usable = policy.manual_limit_bytes[i];
        device.limited_by_manual = true;
      } else if (policy.manual_limit_bytes[i] > after_reserve) {
        notes.push_back(label + ": manual limit of " +
                        mib_text(detail::mib_ceil(policy.manual_limit_bytes[i])) +
                        " is more than the " + mib_text(detail::mib_floor(after_reserve)) +
                        " free after the " + detail::mib_exact_or_decimal(device.reserve) +
                        " MiB reserve; planning with " +
                        mib_text(detail::mib_floor(after_reserve)));
      }
    }
    devices.push_back(std::move(device));
  }
  return devices;
}

std::vector<std::int64_t> capacities(const std::vector<DevicePlacement>& devices) {
  std::vector<std::int64_t> caps;
  for (const DevicePlacement& device : devices)
    caps.push_back(device.usable);
  return caps;
}

// What every module needs at `pages`, with the cache taken out of the layers
// and onto the fixed cache device when the request names one.
std::vector<ModuleNeed> needs_at(const PlacementRequest& request, std::int64_t pages,
                                 Prepaid& prepaid) {
  std::vector<ModuleNeed> needs = detail::module_needs(
      request.modules, pages, request.staging_slots, request.window_pool_pages);
  prepaid =
      detail::fix_cache(needs, request.cache_device.value_or(-1), request.device_scratch_bytes);
  return needs;
}

Packing place(PlacementMode mode, const std::vector<ModuleNeed>& needs,
              const std::vector<std::int64_t>& caps, std::int64_t scratch, const Prepaid& prepaid) {
  Packing packing = detail::pack_in_order(needs, caps, scratch, -1, prepaid);
  if (mode != PlacementMode::Balanced || !packing.complete) return packing;
  return detail::pack_balanced(needs, caps, scratch, prepaid);
}

// Host memory the offloaded pages may take; unlimited when the request
// gives no host.
std::int64_t host_usable(const PlacementRequest& request) {
  if (!request.host) return detail::kSaturated;
  return std::max<std::int64_t>(0, request.host->free_bytes - request.host->reserve_bytes);
}

// Every mode fits exactly when fill-in-order fits with the same capacities
// (Balanced only tightens them while it still fits), and fitting only gets
// harder with more pages, so the largest context is a binary search.
std::optional<ContextLimit> find_largest_context(const PlacementRequest& request,
                                                 const std::vector<std::int64_t>& caps) {
  const std::int64_t host = host_usable(request);
  const auto fits = [&](std::int64_t pages) {
    Prepaid prepaid;
    const std::vector<ModuleNeed> needs = needs_at(request, pages, prepaid);
    return detail::host_cache_bytes(needs) <= host &&
           detail::pack_in_order(needs, caps, request.device_scratch_bytes, -1, prepaid).complete;
  };
  if (!fits(0)) return std::nullopt;
  // Per page on the devices (an offloaded layer's ring counted once, the
  // least it costs) and in host memory.
  std::int64_t per_page = 0, host_per_page = 0, slot_per_page = 0;
  for (const ModuleCost& module : request.modules) {
    // A window pool's layers stop growing at its size: not counted here,
    // which keeps the bound an upper one.
    if (module.in_window_pool && request.window_pool_pages > 0) continue;
    if (module.cache_in_host_memory) {
      host_per_page = add_sat(host_per_page, module.cache_bytes_per_page);
      slot_per_page = std::max(slot_per_page, module.cache_bytes_per_page);
    } else {
      per_page = add_sat(per_page, module.cache_bytes_per_page);
    }
  }
  per_page = add_sat(per_page, detail::mul_sat(slot_per_page, request.staging_slots));
  std::int64_t high = kMaxPages;
  if (per_page > 0) {
    // More pages than this cannot fit: their cache alone exceeds all usable memory.
    std::int64_t all_usable = 0;
    for (const std::int64_t cap : caps)
      all_usable = add_sat(all_usable, cap);
    high = std::min(high, all_usable / per_page);
  }
  if (host_per_page > 0) high = std::min(high, host / host_per_page);
  std::int64_t low = 0;
  if (fits(high)) {
    low = high;
  } else {
    while (high - low > 1) {
      const std::int64_t middle = low + (high - low) / 2;
      (fits(middle) ? low : high) = middle;
    }
  }
  ContextLimit limit{low, low * request.page_size, false};
  if (request.window_pages > 0 && low >= request.window_pages) {
    limit.window_bounded = true;
    limit.tokens = request.model_context_tokens > 0 ? request.model_context_tokens
                                                    : kMaxPages * request.page_size;
  }
  if (request.model_context_tokens > 0 && limit.tokens >= request.model_context_tokens) {
    limit.tokens = request.model_context_tokens;
    if (!limit.window_bounded) limit.pages = pages_for_tokens(limit.tokens, request.page_size);
    limit.model_limit = true;
  }
  return limit;
}

// Where the overflow lands: earlier devices filled in order, the last device
// that can hold any module at all taking everything that remains.
Shortfall find_shortfall(const PlacementRequest& request, const std::vector<std::int64_t>& caps,
                         std::int64_t pages, Packing* overflow) {
  Shortfall shortfall;
  if (caps.empty()) {
    shortfall.kind = Shortfall::Kind::NoDevices;
    return shortfall;
  }
  shortfall.without_context = pages == 0;
  Prepaid prepaid;
  const std::vector<ModuleNeed> needs = needs_at(request, pages, prepaid);
  if (prepaid.slot >= 0 && prepaid.total() > caps[static_cast<std::size_t>(prepaid.slot)]) {
    // The cache has only one place to go; no spreading of weights helps.
    shortfall.kind = Shortfall::Kind::CacheDevice;
    shortfall.slot = prepaid.slot;
    shortfall.needed = prepaid.total();
    shortfall.usable = caps[static_cast<std::size_t>(prepaid.slot)];
    if (overflow != nullptr) {
      *overflow = detail::pack_in_order(needs, caps, request.device_scratch_bytes, -1, prepaid);
    }
    return shortfall;
  }
  const std::int64_t smallest = detail::smallest_module_need(needs, request.device_scratch_bytes);
  int target = -1;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    if (caps[i] >= smallest) target = static_cast<int>(i);
  }
  if (target < 0) {
    const auto largest = std::max_element(caps.begin(), caps.end());
    shortfall.kind = Shortfall::Kind::NoRoomAnywhere;
    shortfall.slot = static_cast<int>(largest - caps.begin());
    shortfall.needed = smallest;
    shortfall.usable = *largest;
    shortfall.module =
        request.modules[static_cast<std::size_t>(detail::smallest_module(needs))].name;
    shortfall.module_needed = smallest;
    return shortfall;
  }
  Packing spilled =
      detail::pack_in_order(needs, caps, request.device_scratch_bytes, target, prepaid);
  const auto slot = static_cast<std::size_t>(target);
  shortfall.kind = Shortfall::Kind::Overflow;
  shortfall.slot = target;
  shortfall.needed = spilled.used[slot];
  shortfall.usable = caps[slot];
  // A module no device can hold is the first thing to say.
  const int biggest = detail::largest_module(needs);
  const std::int64_t biggest_need =
      add_sat(needs[static_cast<std::size_t>(biggest)].total, request.device_scratch_bytes);
  if (biggest_need > *std::max_element(caps.begin(), caps.end())) {
    shortfall.module = request.modules[static_cast<std::size_t>(biggest)].name;
    shortfall.module_needed = biggest_need;
  }
  if (overflow != nullptr) *overflow = std::move(spilled);
  return shortfall;
}

void apply_packing(const PlacementRequest& request, const Packing& packing,
                   const std::vector<ModuleNeed>& needs, const Prepaid& prepaid,
                   PlacementPlan& plan) {
  const std::int64_t device_scratch = request.device_scratch_bytes;
  plan.modules.assign(needs.size(), ModulePlacement{});
  if (prepaid.slot >= 0) {
    DevicePlacement& device = plan.devices[static_cast<std::size_t>(prepaid.slot)];
    plan.cache_slot = prepaid.slot;
    device.fixed_cache = true;
    device.cache = prepaid.cache;
    device.staging = prepaid.staging;
    device.scratch = prepaid.scratch;
  }
  for (std::size_t i = 0; i < needs.size(); ++i) {
    const int slot = packing.module_slot[i];
    ModulePlacement& module = plan.modules[i];
    module.name = request.modules[i].name;
    module.kind = request.modules[i].kind;
    module.weight_bytes = needs[i].weights;
    module.cache_bytes = detail::mul_sat(
        request.modules[i].cache_bytes_per_page,
        detail::module_pages(request.modules[i], plan.pages, request.window_pool_pages));
    module.cache_in_host_memory = request.modules[i].cache_in_host_memory;
    if (slot < 0) continue;
    DevicePlacement& device = plan.devices[static_cast<std::size_t>(slot)];
    module.slot = slot;
    module.device = device.index;
    if (device.module_count == 0) {
      device.first_module = static_cast<int>(i);
      // The fixed cache's device has paid its scratch already.
      if (!device.fixed_cache) device.scratch = add_sat(device.scratch, device_scratch);
    }
    ++device.module_count;
    device.weights = add_sat(device.weights, needs[i].weights);
    device.cache = add_sat(device.cache, needs[i].cache);
    // One ring per device, however many offloaded layers share it.
    device.staging = std::max(device.staging, needs[i].staging);
    device.scratch = add_sat(device.scratch, needs[i].extra_scratch);
  }
  for (DevicePlacement& device : plan.devices) {
    device.planned =
        add_sat(add_sat(add_sat(device.weights, device.cache), device.staging), device.scratch);
    device.free_after = device.free_before - device.planned;
  }
}

void note_unusable_devices(const PlacementRequest& request, const std::vector<ModuleNeed>& needs,
                           PlacementPlan& plan) {
  if (needs.empty()) return;
  const std::int64_t smallest = detail::smallest_module_need(needs, request.device_scratch_bytes);
  const std::string& name =
      request.modules[static_cast<std::size_t>(detail::smallest_module(needs))].name;
  for (const DevicePlacement& device : plan.devices) {
    if (device.usable == 0 || device.usable >= smallest || device.used()) continue;
    plan.notes.push_back(detail::device_label(device) + " " +
                         detail::availability(device, device.usable) +
                         ", too little for any module (the smallest, " + name + ", needs " +
                         mib_text(detail::mib_ceil(smallest)) + " with scratch); not used");
  }
}

std::optional<HostCachePlacement> host_cache_placement(const PlacementRequest& request,
                                                       const std::vector<ModuleNeed>& needs,
                                                       std::int64_t pages) {
  const std::int64_t bytes = detail::host_cache_bytes(needs);
  bool any = false;
  for (const ModuleCost& module : request.modules)
    any = any || module.cache_in_host_memory;
  if (!any) return std::nullopt;
  HostCachePlacement host;
  host.bytes = bytes;
  if (request.host) {
    host.free_before = request.host->free_bytes;
    host.reserve = request.host->reserve_bytes;
    host.usable = host_usable(request);
  }
  // A decode step at the planned context: every page a layer reads comes up
  // (those of its window, for a sliding layer), the page it writes goes back.
  for (const ModuleCost& module : request.modules) {
    if (!module.cache_in_host_memory) continue;
    std::int64_t read = pages;
    if (module.sliding_window > 0) {
      read = std::min(pages, pages_for_tokens(module.sliding_window, request.page_size) + 1);
    }
    host.copy_bytes_per_step =
        add_sat(host.copy_bytes_per_step, detail::mul_sat(module.cache_bytes_per_page, read + 1));
  }
  host.copy_bytes_per_second = request.host_copy_bytes_per_second;
  if (host.copy_bytes_per_second > 0) {
    host.seconds_per_step =
        static_cast<double>(host.copy_bytes_per_step) / host.copy_bytes_per_second;
  }
  return host;
}

}  // namespace

PlacementPlan plan_placement(const PlacementRequest& request) {
  request.validate();
  PlacementPlan plan;
  plan.mode = request.policy.mode;
  plan.page_size = request.page_size;
  plan.pages = pages_for_tokens(request.context_tokens, request.page_size);
  plan.context_tokens = plan.pages * request.page_size;
  plan.model_context_tokens = request.model_context_tokens;
  if (request.window_pool_pages > 0) {
    plan.window_pool_pages = std::min(plan.pages, request.window_pool_pages);
  }
  plan.devices = budget_devices(request, plan.notes);

  const std::vector<std::int64_t> caps = capacities(plan.devices);
  Prepaid prepaid;
  const std::vector<ModuleNeed> needs = needs_at(request, plan.pages, prepaid);
  Packing packing = place(plan.mode, needs, caps, request.device_scratch_bytes, prepaid);
  plan.fits = packing.complete;
  plan.largest_context = find_largest_context(request, caps);
  plan.cache_residence = request.cache_residence;
  plan.host_cache = host_cache_placement(request, needs, plan.pages);

  if (plan.fits && plan.host_cache && plan.host_cache->bytes > host_usable(request)) {
    plan.fits = false;
    Shortfall shortfall;
    shortfall.kind = Shortfall::Kind::HostMemory;
    shortfall.needed = plan.host_cache->bytes;
    shortfall.usable = plan.host_cache->usable;
    plan.shortfall = shortfall;
    plan.problem = detail::host_memory_message(*plan.host_cache, plan.largest_context);
  } else if (!plan.fits) {
    Shortfall shortfall = find_shortfall(request, caps, plan.pages, &packing);
    if (!plan.largest_context && plan.pages > 0) {
      // Even the weights do not fit: say so with the numbers of no context.
      shortfall = find_shortfall(request, caps, 0, nullptr);
    }
    plan.shortfall = shortfall;
    plan.problem =
        detail::does_not_fit_message(shortfall, plan.devices, plan.largest_context, plan.page_size);
  }
  apply_packing(request, packing, needs, prepaid, plan);
  note_unusable_devices(request, needs, plan);
  plan.vision_tower = detail::place_vision_tower(request, plan);
  return plan;
}

}  // namespace quire::engine
