#pragma once

#include <optional>
#include <string>

#include "quire/engine/selfcheck/self_check_gate.h"
#include "quire/kernels/cuda_loader.h"

namespace quire::cli {

// The CUDA backend's self-check as quire-cli keeps it: outcomes and the log
// in the user's cache folder (SelfCheckStore::default_folder()).
engine::selfcheck::SelfCheckStore cuda_self_check_store();

// Runs the check for `cuda` unless an outcome is remembered for its key
// (always with `force`).
engine::selfcheck::GateOutcome check_cuda(const kernels::LoadedBackend& cuda, bool force);

// What is remembered for `cuda`'s key, if anything; never runs the check.
std::optional<engine::selfcheck::SelfCheckRecord> remembered_cuda_check(
    const kernels::LoadedBackend& cuda);

// Before the CUDA backend is used: nothing when it may be (its check passed,
// now or before, or QUIRE_SKIP_CUDA_SELF_CHECK=1 skips it), else the one-line
// reason it may not.
std::optional<std::string> cuda_self_check_problem(const kernels::LoadedBackend& cuda);

// How a user overrides a failed check, for the end of a message.
std::string self_check_override_hint();

}  // namespace quire::cli
