#pragma once

// What quire-cli bench measures of the machine rather than of the model: the
// memory bandwidth that bounds decode and the dense product rate that
// bounds prefill, and the processor's name for the report.

#include <cstdint>
#include <string>

#include "quire/kernels/backend.h"

namespace quire::cli {

// Bytes copied per second by memcpy over a buffer far larger than the caches,
// counting the read and the write: the practical ceiling of memory traffic.
double copy_bandwidth();

// The same ceiling on a GPU: a device-to-device copy within its memory.
double device_copy_bandwidth(kernels::Backend& backend, int device);

// Multiply-adds per second of the backend's dense FP16 product on an
// in x out weight with `rows` input rows.
double matmul_rate(kernels::Backend& backend, int device, std::int64_t in, std::int64_t out,
                   std::int64_t rows);

// The processor's name as the kernel reports it.
std::string cpu_name();

}  // namespace quire::cli
