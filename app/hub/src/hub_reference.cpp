#include "quire/hub/hub_reference.h"

#include "quire/hub/hub_error.h"

namespace quire::hub {

std::optional<HubReference> parse_hub_reference(std::string_view text) {
  if (!text.starts_with("hf:")) return std::nullopt;
  std::string_view rest = text.substr(3);
  HubReference reference;
  if (const std::size_t at = rest.find('@'); at != std::string_view::npos) {
    reference.revision = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
    if (reference.revision.empty())
      throw HubProtocolError("\"" + std::string(text) + "\" names no revision after '@'.");
    checked_repo_path(reference.revision);  // refs/pr/1 is a revision; ../x is not
  }
  reference.repo = std::string(rest);
  if (!is_valid_repo_id(reference.repo))
    throw HubProtocolError("\"" + std::string(text) +
                           "\" is not a Hub model such as hf:org/name or hf:org/name@revision.");
  return reference;
}

std::filesystem::path cached_snapshot(const HubReference& reference, const HubCache& cache) {
  const std::optional<std::filesystem::path> folder =
      cache.find_snapshot(reference.repo, reference.revision);
  const std::string name = "hf:" + reference.repo + "@" + reference.revision;
  if (!folder)
    throw HubProtocolError(name + " is not in the cache " + cache.root().string() +
                           "; download it first: quire-cli download " + reference.repo +
                           " --revision " + reference.revision);
  std::error_code error;
  for (auto entry = std::filesystem::recursive_directory_iterator(*folder, error);
       !error && entry != std::filesystem::recursive_directory_iterator(); entry.increment(error)) {
    if (!cache.stays_inside(entry->path()))
      throw HubProtocolError(name + ": " + entry->path().string() +
                             " is a link that leads out of the cache; it is not opened.");
  }
  return *folder;
}

}  // namespace quire::hub
