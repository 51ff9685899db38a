// A request's preset: its values where the request is silent.

#include "quire/server/request_preset.h"

#include <algorithm>

#include "quire/server/api_error.h"

namespace quire::server {
namespace {

void fill_sampling(SamplingFields& sampling, const RequestPreset& preset) {
  if (!sampling.temperature) sampling.temperature = preset.temperature;
  if (!sampling.top_p) sampling.top_p = preset.top_p;
  if (!sampling.min_p) sampling.min_p = preset.min_p;
  if (!sampling.repetition_penalty) sampling.repetition_penalty = preset.repetition_penalty;
  if (!sampling.max_tokens) sampling.max_tokens = preset.max_tokens;
}

RequestPreset find_requested(const std::string& name, const PresetCatalog& catalog) {
  std::optional<RequestPreset> preset;
  if (catalog.find) preset = catalog.find(name);
  if (preset) return *preset;
  const std::vector<std::string> names =
      catalog.names ? catalog.names() : std::vector<std::string>{};
  if (names.empty()) {
    throw ApiException(invalid_request(
        "preset \"" + name + "\" is unknown: this server has no presets.", "preset"));
  }
  std::string list;
  for (const std::string& known : names)
    list += (list.empty() ? "" : ", ") + known;
  throw ApiException(invalid_request(
      "preset \"" + name + "\" is unknown. Available presets: " + list + ".", "preset"));
}

}  // namespace

void apply_preset(ChatCompletionRequest& request, const RequestPreset& preset) {
  fill_sampling(request.sampling, preset);
  if (!preset.system_prompt || preset.system_prompt->empty()) return;
  const bool has_system =
      std::any_of(request.messages.begin(), request.messages.end(),
                  [](const ChatMessage& message) { return message.role == "system"; });
  if (has_system) return;
  ChatMessage system;
  system.role = "system";
  system.content = *preset.system_prompt;
  request.messages.insert(request.messages.begin(), system);
  if (!request.uses_tools()) request.turns.system = *preset.system_prompt;
}

void apply_preset(CompletionRequest& request, const RequestPreset& preset) {
  // A completion's prompt is raw text: a system prompt has no place in it.
  fill_sampling(request.sampling, preset);
}

void apply_requested_preset(ChatCompletionRequest& request, const PresetCatalog& catalog) {
  if (!request.preset.empty()) {
    apply_preset(request, find_requested(request.preset, catalog));
  } else if (catalog.fallback) {
    apply_preset(request, *catalog.fallback);
  }
}

void apply_requested_preset(CompletionRequest& request, const PresetCatalog& catalog) {
  if (!request.preset.empty()) {
    apply_preset(request, find_requested(request.preset, catalog));
  } else if (catalog.fallback) {
    apply_preset(request, *catalog.fallback);
  }
}

}  // namespace quire::server
