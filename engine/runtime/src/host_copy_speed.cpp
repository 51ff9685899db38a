#include "quire/engine/runtime/host_copy_speed.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

namespace quire::engine {

double measure_host_copy_speed(kernels::Backend& backend, int device, std::size_t bytes) {
  kernels::DeviceBuffer host, target;
  try {
    host = backend.allocate_host(bytes, "copy speed test");
    target = backend.allocate(device, bytes, "copy speed test");
  } catch (const kernels::DeviceOutOfMemory&) {
    return 0;
  }
  // Touched first, so that the copies time the transfer, not page faults.
  std::memset(host.data(), 1, bytes);
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    backend.copy(target.data(), device, host.data(), -1, bytes);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (took.count() > 0) best = std::max(best, static_cast<double>(bytes) / took.count());
  }
  return best;
}

std::int64_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::int64_t kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace quire::engine
