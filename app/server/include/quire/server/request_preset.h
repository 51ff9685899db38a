#pragma once

// A preset named by a request ("preset": "Creative"): its values fill what the
// request leaves out. The request's own fields win; the preset's system prompt
// is used when the request has no system message. The server knows presets
// only through a catalog its owner gives (quire-cli serve: a folder of preset
// files; the app: its own library), so that this code needs no Qt.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "quire/server/openai_request.h"

namespace quire::server {

// The values of a preset that a request can take. (A preset's prompt format
// is not among them: the server renders every request in the model's format.)
// The sampling is the request's own SamplingFields, so that each field a
// preset gains is filled in like the request's (fill_sampling_fields).
struct RequestPreset {
  std::string name;
  std::optional<std::string> system_prompt;
  SamplingFields sampling;
  // A chat completion's context_overflow; completions have none.
  std::optional<engine::ContextPolicy> context_overflow;

  friend bool operator==(const RequestPreset&, const RequestPreset&) = default;
};

struct PresetCatalog {
  // nullopt for a name it does not know.
  std::function<std::optional<RequestPreset>(const std::string&)> find;
  // Every name, for the error that lists them.
  std::function<std::vector<std::string>()> names;
  // For requests that name no preset (quire-cli serve --preset); none: such
  // requests keep OpenAI's defaults.
  std::optional<RequestPreset> fallback;
};

// Each field of `sampling` that is empty or absent taken from `preset`; the
// given ones stay. quire-cli fills its options the same way.
void fill_sampling_fields(SamplingFields& sampling, const SamplingFields& preset);

// Fills what the request leaves out from `preset`.
void apply_preset(ChatCompletionRequest& request, const RequestPreset& preset);
void apply_preset(CompletionRequest& request, const RequestPreset& preset);

// The request's "preset" applied from `catalog`; the catalog's fallback when
// it names none.
// Throws ApiException 400 (param "preset") for a name the catalog does not
// know, listing the available ones, or when the server has no presets.
void apply_requested_preset(ChatCompletionRequest& request, const PresetCatalog& catalog);
void apply_requested_preset(CompletionRequest& request, const PresetCatalog& catalog);

}  // namespace quire::server
