#pragma once

#include <cstddef>
#include <cstdint>

#include "quire/kernels/backend.h"

namespace quire::engine {

// Bytes per second of host-to-device copies into `device`, the best of a few
// copies of `bytes` from host memory made by Backend::allocate_host (so, on a
// GPU, page-locked, as offloaded cache pages are). 0 when the device or the
// host has no room for the test buffers. On the CPU backend, memcpy's speed.
double measure_host_copy_speed(kernels::Backend& backend, int device,
                               std::size_t bytes = std::size_t{64} << 20);

// Host memory available to a new allocation right now (Linux's
// MemAvailable); 0 where it cannot be read.
std::int64_t host_available_bytes();

}  // namespace quire::engine
