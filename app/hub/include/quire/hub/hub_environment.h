#pragma once

// Where the Hub and its cache are, as huggingface_hub reads them from the
// environment, so that Quire and Python's tools share one cache and token:
// HF_ENDPOINT, HF_HOME, HF_HUB_CACHE (and the older HUGGINGFACE_HUB_CACHE),
// HF_TOKEN (and HUGGING_FACE_HUB_TOKEN), HF_TOKEN_PATH or $HF_HOME/token,
// HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE), HF_HUB_DISABLE_IMPLICIT_TOKEN,
// HF_HUB_DISABLE_SYMLINKS.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace quire::hub {

// An environment variable by name; nullopt when unset.
using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;

// The process's own environment.
EnvironmentLookup process_environment();

// huggingface_hub's true values: 1, ON, YES, TRUE in any case.
bool is_true_value(std::string_view value);

struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // without a trailing '/'
  std::filesystem::path hf_home;
  std::filesystem::path cache_dir;  // the hub cache: models--org--name live here
  std::string token;                // "" when none is set
  bool offline = false;
  bool disable_symlinks = false;  // snapshots hold copies of the blobs
};

// The settings the environment gives; the token file is read when no token
// variable is set. An unreadable or missing token file means no token.
HubSettings resolve_hub_settings(const EnvironmentLookup& environment);

// Quire's own models folder, where models live that are not in the Hub's
// cache: $XDG_DATA_HOME/Quire/models, else ~/.local/share/Quire/models.
// quire-cli models and the app's "Get models" page both list it.
std::filesystem::path default_quire_models_folder(const EnvironmentLookup& environment);

}  // namespace quire::hub
