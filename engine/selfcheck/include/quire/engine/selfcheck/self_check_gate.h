#pragma once

#include <filesystem>
#include <string>

#include "quire/engine/selfcheck/backend_comparison.h"
#include "quire/engine/selfcheck/self_check_record.h"
#include "quire/kernels/backend.h"

namespace quire::engine::selfcheck {

// Set to 1, the CUDA backend is used without its self-check (for a user who
// has seen it fail and wants the GPU anyway, or to tell its cost apart).
inline constexpr const char* kSkipVariable = "QUIRE_SKIP_CUDA_SELF_CHECK";
bool skip_requested();

struct GateOptions {
  std::string quire_version;
  // The library the backend came from (LoadedBackend::library), if any.
  std::filesystem::path library;
  // Check even when an outcome is remembered for this key (on demand).
  bool force = false;
};

struct GateOutcome {
  bool passed = false;   // the backend may be used
  bool ran_now = false;  // false: a remembered outcome was used
  SelfCheckRecord record;
  // When the check ran now: its full result (details included).
  SelfCheckResult result;
  // When it did not pass, one line without a trailing period: what was
  // wrong and where the details are ("the CUDA backend failed its self-check
  // against the CPU: ...; details in ~/.cache/Quire/cuda-self-check.log").
  std::string problem;
  // Remembering or logging failed; the outcome holds for this run anyway.
  std::string store_error;
};

// The decision: the outcome remembered in `store` for this backend's key, or
// a fresh compare_backends() against a CPU backend, remembered (when it was
// completed) and logged. Never throws for what the check or the store meet;
// a backend that cannot even say its version or devices does not pass.
GateOutcome check_backend_once(kernels::Backend& candidate, SelfCheckStore& store,
                               const GateOptions& options);

// "CUDA" for the CUDA backend, else the backend's own name.
std::string display_name(const std::string& backend);

}  // namespace quire::engine::selfcheck
