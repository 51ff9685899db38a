// Logical CPU devices, their memory, and copies between them.

#include "quire/kernels/cpu/cpu_backend.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>

#include "quire/kernels/memory_size.h"

namespace quire::kernels {
namespace {

constexpr std::size_t kAlignment = 64;
// Buffers of at least this size (weights of a large layer, K/V pages) are
// aligned to it and asked to live in 2 MiB pages: every decode step streams
// through them, and with 4 KiB pages the processor's prefetchers stop at every
// page boundary and the TLB misses.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

struct MachineMemory {
  std::int64_t total = 0;
  std::int64_t available = 0;
};

MachineMemory machine_memory() {
  MachineMemory memory;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemTotal:") memory.total = kib * 1024;
    if (key == "MemAvailable:") memory.available = kib * 1024;
  }
  return memory;
}

}  // namespace

CpuBackend::CpuBackend(std::vector<Device> devices, ThreadPool* pool)
    : devices_(std::move(devices)), pool_(pool ? *pool : default_thread_pool()) {
  if (devices_.empty()) devices_.push_back(Device{"cpu", 0});
  used_.assign(devices_.size(), 0);
}

CpuBackend::CpuBackend(std::vector<Device> devices, int threads)
    : devices_(std::move(devices)),
      owned_pool_(threads > 0 ? std::make_unique<ThreadPool>(threads) : nullptr),
      pool_(owned_pool_ ? *owned_pool_ : default_thread_pool()) {
  if (devices_.empty()) devices_.push_back(Device{"cpu", 0});
  used_.assign(devices_.size(), 0);
}

CpuBackend::~CpuBackend() = default;

std::vector<CpuBackend::Device> CpuBackend::parse_devices(std::string_view spec) {
  if (spec == "cpu") return {Device{"cpu", 0}};
  constexpr std::string_view prefix = "cpu:";
  if (!spec.starts_with(prefix) || spec.size() == prefix.size()) {
    throw std::invalid_argument("device list \"" + std::string(spec) +
                                "\" is not understood; write cpu, cpu:2x512MiB or cpu:1GiB,512MiB");
  }
  std::vector<Device> devices;
  std::string_view rest = spec.substr(prefix.size());
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    int count = 1;
    if (const std::size_t times = item.find('x'); times != std::string_view::npos) {
      const auto [stop, error] = std::from_chars(item.data(), item.data() + times, count);
      if (error != std::errc() || stop != item.data() + times || count <= 0 || count > 64) {
        throw std::invalid_argument("\"" + std::string(item) +
                                    "\" needs a device count from 1 to 64");
      }
      item = item.substr(times + 1);
    }
    const std::int64_t budget = parse_memory_size(item);
    for (int i = 0; i < count; ++i) {
      devices.push_back(Device{"cpu" + std::to_string(devices.size()), budget});
    }
  }
  return devices;
}

void CpuBackend::check_device(int device) const {
  if (device < 0 || device >= static_cast<int>(devices_.size())) {
    throw std::out_of_range("no CPU device " + std::to_string(device));
  }
}

std::vector<DeviceInfo> CpuBackend::devices() const {
  const MachineMemory machine = machine_memory();
  std::lock_guard lock(mutex_);
  std::vector<DeviceInfo> infos;
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    DeviceInfo info;
    info.index = static_cast<int>(i);
    info.name = devices_[i].name;
    if (devices_[i].budget_bytes > 0) {
      info.total_bytes = devices_[i].budget_bytes;
      info.free_bytes = devices_[i].budget_bytes - used_[i];
    } else {
      info.total_bytes = machine.total;
      info.free_bytes = machine.available;
      // The rest of the desktop needs memory too; a budgeted device has none to keep.
      info.recommended_reserve_bytes = std::int64_t{1} << 30;
      info.host_memory = true;
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

DeviceBuffer CpuBackend::allocate(int device, std::size_t bytes, std::string_view purpose) {
  check_device(device);
  const std::size_t alignment = bytes >= kHugePage ? kHugePage : kAlignment;
  const std::size_t rounded =
      (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  {
    std::lock_guard lock(mutex_);
    const std::int64_t budget = devices_[static_cast<std::size_t>(device)].budget_bytes;
    std::int64_t& used = used_[static_cast<std::size_t>(device)];
    if (budget > 0 && used + static_cast<std::int64_t>(bytes) > budget) {
      throw DeviceOutOfMemory(device, static_cast<std::int64_t>(bytes), budget - used, purpose);
    }
    used += static_cast<std::int64_t>(bytes);
  }
  void* data = std::aligned_alloc(alignment, rounded);
  if (data == nullptr) {
    std::lock_guard lock(mutex_);
    used_[static_cast<std::size_t>(device)] -= static_cast<std::int64_t>(bytes);
    throw DeviceOutOfMemory(device, static_cast<std::int64_t>(bytes), 0, purpose);
  }
#ifdef MADV_HUGEPAGE
  // Only advice: where transparent huge pages are off it fails and nothing changes.
  if (alignment == kHugePage) madvise(data, rounded, MADV_HUGEPAGE);
#endif
  return DeviceBuffer(this, device, data, bytes);
}

void CpuBackend::release(int device, void* data, std::size_t bytes) noexcept {
  std::free(data);
  std::lock_guard lock(mutex_);
  used_[static_cast<std::size_t>(device)] -= static_cast<std::int64_t>(bytes);
}

void CpuBackend::copy(void* destination, int, const void* source, int, std::size_t bytes) {
  if (bytes > 0) std::memmove(destination, source, bytes);
}

void CpuBackend::fill_zero(int, void* data, std::size_t bytes) {
  if (bytes > 0) std::memset(data, 0, bytes);
}

}  // namespace quire::kernels
