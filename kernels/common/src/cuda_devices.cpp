#include "quire/kernels/cuda_devices.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "quire/kernels/memory_size.h"

namespace quire::kernels {
namespace {

constexpr std::string_view kExamples = "write cuda, cuda:0,2 or cuda:0:2x20GiB";
// As many logical devices as the CPU backend allows; more only slows placement.
constexpr int kMaxDevices = 64;

std::string quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

// The whole of `text` as a non-negative integer, or -1.
int whole_number(std::string_view text) {
  int value = -1;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value < 0) return -1;
  return value;
}

// "20GiB" or "2x20GiB" after a GPU index: how many devices, of what budget.
std::pair<int, std::int64_t> parse_share(std::string_view item, std::string_view share) {
  int count = 1;
  if (const std::size_t times = share.find('x'); times != std::string_view::npos) {
    count = whole_number(share.substr(0, times));
    if (count < 1 || count > kMaxDevices) {
      throw std::invalid_argument(quoted(item) + " needs a device count from 1 to " +
                                  std::to_string(kMaxDevices) + " before the x, as in 0:2x20GiB");
    }
    share = share.substr(times + 1);
  }
  if (share.empty()) {
    throw std::invalid_argument(quoted(item) + " needs a budget after the " +
                                (count > 1 || item.back() == 'x' ? "x" : "colon") +
                                ", as in 0:20GiB or 0:2x20GiB");
  }
  return {count, parse_memory_size(share)};
}

}  // namespace

CudaDeviceSpec parse_cuda_devices(std::string_view spec) {
  if (spec == "cuda") return CudaDeviceSpec{true, {}};
  constexpr std::string_view prefix = "cuda:";
  if (!spec.starts_with(prefix) || spec.size() == prefix.size()) {
    throw std::invalid_argument("device list " + quoted(spec) + " is not understood; " +
                                std::string(kExamples));
  }
  CudaDeviceSpec result;
  std::string_view rest = spec.substr(prefix.size());
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.empty()) {
      throw std::invalid_argument("device list " + quoted(spec) +
                                  " has an empty entry between commas; " + std::string(kExamples));
    }
    const std::size_t colon = item.find(':');
    const int gpu = whole_number(item.substr(0, colon));
    if (gpu < 0) {
      throw std::invalid_argument(quoted(item.substr(0, colon)) +
                                  " is not a GPU index (0, 1, ...)");
    }
    int count = 1;
    std::int64_t budget = 0;
    if (colon != std::string_view::npos) {
      std::tie(count, budget) = parse_share(item, item.substr(colon + 1));
    }
    if (static_cast<int>(result.devices.size()) + count > kMaxDevices) {
      throw std::invalid_argument("device list " + quoted(spec) + " has more than " +
                                  std::to_string(kMaxDevices) + " devices");
    }
    result.devices.insert(result.devices.end(), static_cast<std::size_t>(count),
                          CudaLogicalDevice{gpu, budget});
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  // A GPU without a budget is all of that GPU; it cannot also be shared.
  std::map<int, std::pair<int, bool>> mentions;  // gpu -> (devices, any without budget)
  for (const CudaLogicalDevice& device : result.devices) {
    auto& [devices, unbudgeted] = mentions[device.gpu];
    ++devices;
    unbudgeted = unbudgeted || device.budget_bytes == 0;
  }
  for (const auto& [gpu, mention] : mentions) {
    if (mention.first > 1 && mention.second) {
      throw std::invalid_argument(
          "device list " + quoted(spec) + " names GPU " + std::to_string(gpu) +
          " more than once without a budget for each; write cuda:" + std::to_string(gpu) +
          ":2x20GiB for two devices on it");
    }
  }
  return result;
}

std::string to_string(const CudaDeviceSpec& spec) {
  if (spec.all_gpus) return "cuda";
  std::string text = "cuda:";
  for (std::size_t i = 0; i < spec.devices.size();) {
    const CudaLogicalDevice& device = spec.devices[i];
    std::size_t same = 1;
    // Repeated shares of one GPU come back in the NxSIZE form they were written in.
    while (device.budget_bytes > 0 && i + same < spec.devices.size() &&
           spec.devices[i + same] == device) {
      ++same;
    }
    if (i > 0) text += ',';
    text += std::to_string(device.gpu);
    if (device.budget_bytes > 0) {
      text += ':';
      if (same > 1) text += std::to_string(same) + "x";
      text += format_memory_size(device.budget_bytes);
    }
    i += same;
  }
  return text;
}

std::vector<CudaLogicalDevice> resolve_cuda_devices(const CudaDeviceSpec& spec, int gpu_count) {
  if (spec.all_gpus) {
    if (gpu_count <= 0) throw std::invalid_argument("no NVIDIA GPU was found");
    std::vector<CudaLogicalDevice> devices;
    for (int gpu = 0; gpu < gpu_count; ++gpu)
      devices.push_back(CudaLogicalDevice{gpu, 0});
    return devices;
  }
  for (const CudaLogicalDevice& device : spec.devices) {
    if (device.gpu >= gpu_count) {
      const std::string present = gpu_count == 0 ? "has no NVIDIA GPU"
                                  : gpu_count == 1
                                      ? "has one GPU, 0"
                                      : "has GPUs 0 to " + std::to_string(gpu_count - 1);
      throw std::invalid_argument("the device list " + to_string(spec) + " names GPU " +
                                  std::to_string(device.gpu) + ", but this machine " + present);
    }
  }
  return spec.devices;
}

}  // namespace quire::kernels
