#pragma once

// The host-memory tier's size when the user has not chosen one: a share of
// the memory free when Quire first runs.

#include <QtGlobal>
#include <functional>

namespace quire::app {

// Bytes of memory free for new programs right now; 0 when it cannot be told.
using FreeMemorySource = std::function<qint64()>;

// MemAvailable of /proc/meminfo where there is one (it counts the page cache
// the kernel would give back), else the free physical pages.
qint64 system_free_memory();

// MiB of host-memory tier for `free_bytes` of free memory: an eighth, at most
// kHostCacheDefaultCapMib, in whole MiB.
int host_cache_default_mib(qint64 free_bytes);

inline constexpr int kHostCacheDefaultCapMib = 4096;

}  // namespace quire::app
