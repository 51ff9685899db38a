// quire-cli bench's measurements of the machine: see bench_hardware.h.

#include "bench_hardware.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

namespace quire::cli {
namespace {

using HardwareClock = std::chrono::steady_clock;

double seconds_from(HardwareClock::time_point start) {
  return std::chrono::duration<double>(HardwareClock::now() - start).count();
}

}  // namespace

// Bytes copied per second by memcpy over a buffer far larger than the caches,
// counting the read and the write: the practical ceiling of memory traffic.
double copy_bandwidth() {
  const std::size_t bytes = std::size_t{256} << 20;
  std::vector<char> source(bytes, 1), target(bytes, 0);
  double best = 0;
  // The best of several copies: a ceiling, and single copies on a shared
  // machine scatter.
  for (int round = 0; round < 10; ++round) {
    const HardwareClock::time_point start = HardwareClock::now();
    std::memcpy(target.data(), source.data(), bytes);
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds_from(start));
  }
  volatile char sink = target[bytes / 2];
  (void)sink;
  return best;
}

// The same ceiling on a GPU: a device-to-device copy within its memory, timed
// around a synchronization, counting the read and the write. A gigabyte
// each way is many times any GPU's L2 cache.
double device_copy_bandwidth(kernels::Backend& backend, int device) {
  const std::size_t bytes = std::size_t{1} << 30;
  kernels::DeviceBuffer source = backend.allocate(device, bytes, "benchmark copy source");
  kernels::DeviceBuffer target = backend.allocate(device, bytes, "benchmark copy target");
  backend.fill_zero(device, source.data(), bytes);
  backend.copy(target.data(), device, source.data(), device, bytes);  // warm-up
  backend.synchronize(device);
  double best = 0;
  for (int round = 0; round < 10; ++round) {
    const HardwareClock::time_point start = HardwareClock::now();
    backend.copy(target.data(), device, source.data(), device, bytes);
    backend.synchronize(device);
    best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds_from(start));
  }
  return best;
}

// Multiply-adds per second of the backend's dense FP16 product, measured on
// the model's own MLP shape (hidden -> intermediate) with `rows` input rows:
// the rate that prefill, which is mostly such products, could reach.
double matmul_rate(kernels::Backend& backend, int device, std::int64_t in, std::int64_t out,
                   std::int64_t rows) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * in));
  for (float& v : x)
    v = uniform(rng);
  // FP16 0.0 to 0.5 (sign and exponent bits kept small, so no infinities).
  std::vector<std::uint16_t> w(static_cast<std::size_t>(in * out));
  for (std::uint16_t& v : w)
    v = static_cast<std::uint16_t>(0x3400u | (rng() & 0x3ffu));
  kernels::DeviceBuffer input = backend.allocate(device, x.size() * 4, "benchmark inputs");
  kernels::DeviceBuffer weight = backend.allocate(device, w.size() * 2, "benchmark weight");
  kernels::DeviceBuffer output =
      backend.allocate(device, static_cast<std::size_t>(rows * out) * 4, "benchmark outputs");
  backend.copy(input.data(), device, x.data(), -1, x.size() * 4);
  backend.copy(weight.data(), device, w.data(), -1, w.size() * 2);
  kernels::LinearWeight linear;
  linear.in_features = in;
  linear.out_features = out;
  linear.format = kernels::DenseWeight{weight.data(), kernels::DType::F16};
  double best = 0.0;
  for (int round = 0; round < 3; ++round) {
    const HardwareClock::time_point start = HardwareClock::now();
    backend.linear(device, input.as<float>(), rows, linear, output.as<float>(),
                   kernels::ProductRows::prompt);
    backend.synchronize(device);
    best = std::max(best, double(rows) * double(in) * double(out) / seconds_from(start));
  }
  return best;
}

// The processor's name as the kernel reports it, so that results from
// different machines are not mistaken for each other.
std::string cpu_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("model name")) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

}  // namespace quire::cli
