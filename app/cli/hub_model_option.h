#pragma once

// Where a command takes a model directory, "hf:org/name" or
// "hf:org/name@revision" opens that revision's snapshot in the Hugging Face
// cache (HF_HUB_CACHE, else $HF_HOME/hub); nothing is downloaded.

namespace CLI {
class Validator;
}

namespace quire::cli {

inline constexpr const char* kModelDirectoryHelp =
    "Model directory, or hf:org/name[@revision] from the Hugging Face cache";

// A CLI11 transform for a model-directory option: hf: references become the
// snapshot folder; other values pass unchanged. A reference that is not in
// the cache is a UsageError that says how to download it.
CLI::Validator hub_model_reference();

}  // namespace quire::cli
