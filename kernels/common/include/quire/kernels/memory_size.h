#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace quire::kernels {

// "512MiB", "20GiB", "64K", "4096" (bytes): the budgets of the logical devices
// in a device list. Units B, KiB, MiB, GiB (or K, M, G); the number is a
// positive integer. Throws std::invalid_argument with the reason.
std::int64_t parse_memory_size(std::string_view text);

// The largest unit that writes `bytes` exactly ("20GiB", "1536MiB", "100B"),
// so that parse_memory_size reads back the same number.
std::string format_memory_size(std::int64_t bytes);

}  // namespace quire::kernels
