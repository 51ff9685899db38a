#pragma once

// The words of a plan: why it does not fit, and notes about devices left out.
// Numbers are chosen to stay true after rounding: what is needed is rounded up
// to whole MiB, what is available is rounded down.

#include <optional>
#include <string>
#include <vector>

#include "quire/engine/planner/placement_plan.h"

namespace quire::engine::detail {

// "device 1 (NVIDIA RTX 3060)"
std::string device_label(const DevicePlacement& device);

// The "does not fit: ..." sentence for a shortfall, with the remedy that the
// largest context allows.
std::string does_not_fit_message(const Shortfall& shortfall,
                                 const std::vector<DevicePlacement>& devices,
                                 const std::optional<ContextLimit>& largest, int page_size);

// The "does not fit: ..." sentence when host memory cannot hold the
// offloaded pages.
std::string host_memory_message(const HostCachePlacement& host,
                                const std::optional<ContextLimit>& largest);

// "has Y MiB free after the Z MiB reserve" or "has a manual limit of Y MiB".
std::string availability(const DevicePlacement& device, std::int64_t usable);

}  // namespace quire::engine::detail
