#pragma once

// What every GPU suite of the CUDA backend does alike: start the backend (or
// say why it cannot run here), seed a random source whose seed goes to the
// log, and move test data on and off the GPU. Device 0 throughout.

#include <QString>
#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "quire/kernels/backend.h"

namespace quire::test {

inline constexpr int kCudaTestDevice = 0;

// The CUDA backend, with `rng` seeded from the system and the seed logged; or
// null after writing why it cannot run here into `why_not`.
std::unique_ptr<kernels::Backend> start_cuda_backend(std::mt19937& rng, QString& why_not);

// A device copy of `host` (one byte for an empty vector, so that every test
// buffer has an address).
kernels::DeviceBuffer upload_raw(kernels::Backend& gpu, const void* host, std::size_t bytes);

template <typename T>
kernels::DeviceBuffer upload_to_gpu(kernels::Backend& gpu, const std::vector<T>& host) {
  return upload_raw(gpu, host.data(), host.size() * sizeof(T));
}

// `count` floats of `buffer`, after the device's queued work has finished.
std::vector<float> download_floats(kernels::Backend& gpu, const kernels::DeviceBuffer& buffer,
                                   std::size_t count);

}  // namespace quire::test
