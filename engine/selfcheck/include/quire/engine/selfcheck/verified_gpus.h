#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/kernels/backend.h"

namespace quire::engine::selfcheck {

// A GPU architecture on which the CUDA backend passed every GPU test.
struct VerifiedArchitecture {
  std::string_view architecture;  // "sm_90"
  std::string_view gpu;           // the card it ran on
  std::string_view date;          // when, as YYYY-MM-DD
};

// Grows as the backend runs on more GPUs.
std::span<const VerifiedArchitecture> verified_architectures();

// "sm_90 (NVIDIA H200, 2026-11-26)", joined with commas.
std::string verified_architectures_text();

// The architectures of `devices` that are not verified, each once, in the
// order they first appear; devices without an architecture (the CPU's) are
// left out.
std::vector<std::string> unverified_architectures(std::span<const kernels::DeviceInfo> devices);

}  // namespace quire::engine::selfcheck
