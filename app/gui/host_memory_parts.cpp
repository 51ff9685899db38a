#include "host_memory_parts.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace quire::gui {

ProcessMemory read_process_memory() {
  ProcessMemory memory;
  // statm: sizes in pages; the second is the resident set.
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  if (statm >> size >> resident) memory.resident = resident * sysconf(_SC_PAGESIZE);
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::int64_t kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") memory.machine_total = kib * 1024;
    if (key == "MemAvailable:") memory.machine_available = kib * 1024;
  }
  return memory;
}

void add_host_parts(ui::DeviceMemoryView& view, std::int64_t offloaded_pages,
                    std::int64_t host_tier, std::int64_t resident) {
  view.host = true;
  view.cache += offloaded_pages;
  view.host_tier += host_tier;
  const std::int64_t accounted = view.weights + view.cache + view.host_tier + view.scratch;
  view.program = std::max<std::int64_t>(0, resident - accounted);
}

}  // namespace quire::gui
