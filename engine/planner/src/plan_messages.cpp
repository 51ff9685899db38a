#include "plan_messages.h"

#include "byte_math.h"

namespace quire::engine::detail {
namespace {

std::string mib(std::int64_t whole) {
  return std::to_string(whole) + " MiB";
}

// "a, b, or c"; "a or b".
std::string join_choices(const std::vector<std::string>& choices) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) text += choices.size() > 2 ? ", " : " ";
    if (i > 0 && i + 1 == choices.size()) text += "or ";
    text += choices[i];
  }
  return text;
}

// What the user can do, given what the largest context search found.
std::string remedy(const std::optional<ContextLimit>& largest, int page_size, bool manual) {
  std::vector<std::string> choices;
  std::string lead;
  if (!largest) {
    choices.emplace_back("use a smaller quantization");
  } else if (largest->pages == 0) {
    lead =
        "the weights leave no room for one " + std::to_string(page_size) + "-token page of cache; ";
    choices.emplace_back("use a smaller cache format");
  } else {
    choices.push_back("lower the context to " + std::to_string(largest->tokens) + " tokens");
    choices.emplace_back("use a smaller cache format");
  }
  if (manual)
    choices.insert(choices.begin() + (largest && largest->pages > 0 ? 1 : 0),
                   "raise the manual limit");
  choices.emplace_back("add a device");
  return lead + join_choices(choices);
}

}  // namespace

std::string device_label(const DevicePlacement& device) {
  return "device " + std::to_string(device.index) + " (" + device.name + ")";
}

std::string availability(const DevicePlacement& device, std::int64_t usable) {
  if (device.limited_by_manual) return "has a manual limit of " + mib(mib_floor(usable));
  return "has " + mib(mib_floor(usable)) + " free after the " +
         mib_exact_or_decimal(device.reserve) + " MiB reserve";
}

std::string does_not_fit_message(const Shortfall& shortfall,
                                 const std::vector<DevicePlacement>& devices,
                                 const std::optional<ContextLimit>& largest, int page_size) {
  if (shortfall.kind == Shortfall::Kind::NoDevices) {
    return "does not fit: there is no device to place the model on";
  }
  const DevicePlacement& device = devices[static_cast<std::size_t>(shortfall.slot)];
  const std::string verdict =
      shortfall.without_context ? "does not fit even with no context: " : "does not fit: ";
  const std::string tail = " — " + remedy(largest, page_size, device.limited_by_manual);
  if (shortfall.kind == Shortfall::Kind::CacheDevice) {
    std::string text = verdict + "the KV cache fixed on " + device_label(device) + " needs " +
                       mib(mib_ceil(shortfall.needed)) + " there with its scratch, and it " +
                       availability(device, shortfall.usable) + " — ";
    if (largest && largest->pages > 0) {
      text += "lower the context to " + std::to_string(largest->tokens) + " tokens, ";
    }
    return text + "use a smaller cache format, or fix the cache on a device with more room";
  }
  if (shortfall.kind == Shortfall::Kind::NoRoomAnywhere) {
    return verdict + "no device can hold even one module: the smallest, " + shortfall.module +
           ", needs " + mib(mib_ceil(shortfall.needed)) + " with scratch, and the largest, " +
           device_label(device) + ", " + availability(device, shortfall.usable) + tail;
  }
  const std::string what =
      shortfall.without_context ? "the weights and scratch alone need " : "needs ";
  const std::string oversized = shortfall.module.empty()
                                    ? std::string()
                                    : "; " + shortfall.module + " alone needs " +
                                          mib(mib_ceil(shortfall.module_needed)) +
                                          " with scratch, more than any device offers";
  return verdict + what + mib(mib_ceil(shortfall.needed)) + " on " + device_label(device) + ", " +
         availability(device, shortfall.usable) + oversized + tail;
}

std::string host_memory_message(const HostCachePlacement& host,
                                const std::optional<ContextLimit>& largest) {
  std::string text = "does not fit: the KV cache offloaded to host memory needs " +
                     mib(mib_ceil(host.bytes)) + ", and host memory has " +
                     mib(mib_floor(host.usable)) + " free after the " +
                     mib_exact_or_decimal(host.reserve) + " MiB reserve — ";
  if (largest && largest->pages > 0) {
    text += "lower the context to " + std::to_string(largest->tokens) + " tokens, ";
  }
  return text + "use a smaller cache format, or close programs that hold memory";
}

}  // namespace quire::engine::detail
