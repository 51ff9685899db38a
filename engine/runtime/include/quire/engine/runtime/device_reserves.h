#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "quire/engine/planner/placement_request.h"
#include "quire/kernels/backend.h"

namespace quire::engine {

// Bytes a load keeps free on each device it plans for, by the position of the
// device in the backend's list. Devices differ: a GPU that drives a desktop
// needs more headroom than one that does not.
struct DeviceReserves {
  // What the backend recommends for each device.
  DeviceReserves() = default;
  // One figure for every device (the single value of older front ends).
  DeviceReserves(std::int64_t every_device) : bytes{every_device} {}  // NOLINT: implicit by design
  // One figure per device position; the count must be the devices' count.
  DeviceReserves(std::vector<std::int64_t> per_device) : bytes(std::move(per_device)) {}

  // Empty: recommended; one value: every device; more: one per position.
  std::vector<std::int64_t> bytes;

  bool recommended() const { return bytes.empty(); }
  bool per_device() const { return bytes.size() > 1; }
};

// Writes `reserves` into `policy` for these devices. Throws
// std::invalid_argument naming both counts when per-device figures and
// devices disagree in number.
void apply_reserves(const DeviceReserves& reserves, std::span<const kernels::DeviceInfo> devices,
                    PlacementPolicy& policy);

}  // namespace quire::engine
