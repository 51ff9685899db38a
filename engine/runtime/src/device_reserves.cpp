#include "quire/engine/runtime/device_reserves.h"

#include <stdexcept>
#include <string>

namespace quire::engine {

void apply_reserves(const DeviceReserves& reserves, std::span<const kernels::DeviceInfo> devices,
                    PlacementPolicy& policy) {
  policy.reserve_bytes.clear();
  if (reserves.recommended()) {
    for (const kernels::DeviceInfo& device : devices)
      policy.reserve_bytes.push_back(device.recommended_reserve_bytes);
    return;
  }
  if (!reserves.per_device()) {
    policy.default_reserve_bytes = reserves.bytes.front();
    return;
  }
  // A silently shortened or padded list would keep the wrong device's
  // headroom, so a count that disagrees is refused.
  if (reserves.bytes.size() != devices.size()) {
    throw std::invalid_argument(
        "reserves are given for " + std::to_string(reserves.bytes.size()) + " devices but " +
        std::to_string(devices.size()) + (devices.size() == 1 ? " device is" : " devices are") +
        " selected; give one reserve for every device, or one per selected device");
  }
  policy.reserve_bytes = reserves.bytes;
}

}  // namespace quire::engine
