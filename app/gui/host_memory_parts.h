#pragma once

// Host memory as the memory panel shows it: the machine's own memory, which
// holds the cache's offloaded pages and host tier, and Quire itself. What
// Quire's process holds beyond the parts the engine accounts for is shown as
// Quire's, not as memory of other processes.

#include <cstdint>

#include "quire/ui/memory_view_data.h"

namespace quire::gui {

struct ProcessMemory {
  std::int64_t resident = 0;           // this process's resident set
  std::int64_t machine_total = 0;      // the machine's memory
  std::int64_t machine_available = 0;  // what it can still give without swapping
};

// Read from /proc; zeros where it cannot be read (the parts below then
// leave Quire's own share at zero rather than guess).
ProcessMemory read_process_memory();

// Adds to `view`, a host-memory device, the cache's pages in host memory and
// its host tier, and Quire's own memory: the resident set less the parts
// already counted (never below zero). Then what other processes use is what
// the machine has in use beyond all of Quire's parts.
void add_host_parts(ui::DeviceMemoryView& view, std::int64_t offloaded_pages,
                    std::int64_t host_tier, std::int64_t resident);

}  // namespace quire::gui
