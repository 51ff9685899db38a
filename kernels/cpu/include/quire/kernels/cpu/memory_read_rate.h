#pragma once

#include <cstddef>

#include "quire/kernels/cpu/thread_pool.h"

namespace quire::kernels {

// Bytes per second that the threads of `pool` read from host memory
// together: each streams its share of a buffer of `bytes` (far larger than
// the caches), the median of several passes. Decode reads its weights and
// cache this way, so this, not one thread's copy, is the bound its speed is
// measured against.
double measure_read_bandwidth(ThreadPool& pool, std::size_t bytes = std::size_t{256} << 20);

}  // namespace quire::kernels
