#pragma once

// "hf:org/name" or "hf:org/name@revision" where a model folder is expected:
// the cached snapshot of that revision, as huggingface_hub would find it
// (refs/<revision>, or the commit itself), with no request to the Hub.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "quire/hub/hub_cache.h"

namespace quire::hub {

struct HubReference {
  std::string repo;
  std::string revision = "main";
};

// nullopt when `text` does not start with "hf:"; HubProtocolError when it
// does but names no repository as org/name.
std::optional<HubReference> parse_hub_reference(std::string_view text);

// The snapshot folder of `reference` in `cache`. HubProtocolError saying how
// to download it when it is not there, or when one of its files is a link
// that leads out of the cache.
std::filesystem::path cached_snapshot(const HubReference& reference, const HubCache& cache);

}  // namespace quire::hub
