#include "hub_model_option.h"

#include <CLI/CLI.hpp>

#include "cli_support.h"
#include "quire/hub/hub_environment.h"
#include "quire/hub/hub_error.h"
#include "quire/hub/hub_reference.h"

namespace quire::cli {

CLI::Validator hub_model_reference() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        try {
          const std::optional<hub::HubReference> reference = hub::parse_hub_reference(value);
          if (!reference) return {};
          const hub::HubSettings settings = hub::resolve_hub_settings(hub::process_environment());
          value = hub::cached_snapshot(*reference, hub::HubCache(settings.cache_dir)).string();
          return {};
        } catch (const hub::HubProtocolError& error) {
          throw UsageError(error.what());
        }
      },
      "", "hf:org/name[@revision]");
}

}  // namespace quire::cli
