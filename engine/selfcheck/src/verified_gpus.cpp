#include "quire/engine/selfcheck/verified_gpus.h"

#include <algorithm>
#include <array>

namespace quire::engine::selfcheck {
namespace {

constexpr std::array kVerified = {
    VerifiedArchitecture{"sm_90", "NVIDIA H200", "2026-11-26"},
};

bool verified(std::string_view architecture) {
  return std::any_of(kVerified.begin(), kVerified.end(), [&](const VerifiedArchitecture& entry) {
    return entry.architecture == architecture;
  });
}

}  // namespace

std::span<const VerifiedArchitecture> verified_architectures() {
  return kVerified;
}

std::string verified_architectures_text() {
  std::string text;
  for (const VerifiedArchitecture& entry : kVerified) {
    if (!text.empty()) text += ", ";
    text += std::string(entry.architecture) + " (" + std::string(entry.gpu) + ", " +
            std::string(entry.date) + ")";
  }
  return text;
}

std::vector<std::string> unverified_architectures(std::span<const kernels::DeviceInfo> devices) {
  std::vector<std::string> unverified;
  for (const kernels::DeviceInfo& device : devices) {
    if (device.architecture.empty() || verified(device.architecture)) continue;
    if (std::find(unverified.begin(), unverified.end(), device.architecture) == unverified.end())
      unverified.push_back(device.architecture);
  }
  return unverified;
}

}  // namespace quire::engine::selfcheck
