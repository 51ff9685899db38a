#include "quire/hub/hub_environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace quire::hub {
namespace {

std::string trimmed(std::string text) {
  const auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  text.erase(text.begin(), std::find_if_not(text.begin(), text.end(), is_space));
  text.erase(std::find_if_not(text.rbegin(), text.rend(), is_space).base(), text.end());
  return text;
}

// The variable's value when it is set and not empty.
std::optional<std::string> non_empty(const EnvironmentLookup& environment, const char* name) {
  std::optional<std::string> value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string read_token_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return {};
  std::ostringstream text;
  text << file.rdbuf();
  return trimmed(text.str());
}

}  // namespace

EnvironmentLookup process_environment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool is_true_value(std::string_view value) {
  std::string upper(value);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  upper = trimmed(upper);
  return upper == "1" || upper == "ON" || upper == "YES" || upper == "TRUE";
}

HubSettings resolve_hub_settings(const EnvironmentLookup& environment) {
  HubSettings settings;
  if (const auto endpoint = non_empty(environment, "HF_ENDPOINT")) {
    settings.endpoint = trimmed(*endpoint);
    while (settings.endpoint.ends_with('/'))
      settings.endpoint.pop_back();
  }

  if (const auto home = non_empty(environment, "HF_HOME")) {
    settings.hf_home = *home;
  } else if (const auto xdg = non_empty(environment, "XDG_CACHE_HOME")) {
    settings.hf_home = std::filesystem::path(*xdg) / "huggingface";
  } else {
    settings.hf_home = std::filesystem::path(non_empty(environment, "HOME").value_or(".")) /
                       ".cache" / "huggingface";
  }
  if (const auto cache = non_empty(environment, "HF_HUB_CACHE")) {
    settings.cache_dir = *cache;
  } else if (const auto legacy = non_empty(environment, "HUGGINGFACE_HUB_CACHE")) {
    settings.cache_dir = *legacy;
  } else {
    settings.cache_dir = settings.hf_home / "hub";
  }

  const auto flag = [&](const char* name) {
    const auto value = environment(name);
    return value && is_true_value(*value);
  };
  settings.offline = flag("HF_HUB_OFFLINE") || flag("TRANSFORMERS_OFFLINE");
  settings.disable_symlinks = flag("HF_HUB_DISABLE_SYMLINKS");

  if (!flag("HF_HUB_DISABLE_IMPLICIT_TOKEN")) {
    if (const auto token = non_empty(environment, "HF_TOKEN")) {
      settings.token = trimmed(*token);
    } else if (const auto legacy = non_empty(environment, "HUGGING_FACE_HUB_TOKEN")) {
      settings.token = trimmed(*legacy);
    } else {
      const auto token_path = non_empty(environment, "HF_TOKEN_PATH");
      settings.token = read_token_file(token_path ? std::filesystem::path(*token_path)
                                                  : settings.hf_home / "token");
    }
  }
  return settings;
}

std::filesystem::path default_quire_models_folder(const EnvironmentLookup& environment) {
  // The XDG base directory rules ignore a relative XDG_DATA_HOME.
  const auto data = non_empty(environment, "XDG_DATA_HOME");
  const std::filesystem::path base =
      data && std::filesystem::path(*data).is_absolute()
          ? std::filesystem::path(*data)
          : std::filesystem::path(non_empty(environment, "HOME").value_or(".")) / ".local" /
                "share";
  return base / "Quire" / "models";
}

}  // namespace quire::hub
