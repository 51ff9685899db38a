// A request's preset: its values where the request is silent.

#include "quire/server/request_preset.h"

#include <algorithm>
#include <map>
#include <vector>

#include "quire/server/api_error.h"

namespace quire::server {
namespace {

template <typename T>
void fill(std::optional<T>& field, const std::optional<T>& preset) {
  if (!field) field = preset;
}

template <typename T>
void fill(std::vector<T>& field, const std::vector<T>& preset) {
  if (field.empty()) field = preset;
}

template <typename K, typename V>
void fill(std::map<K, V>& field, const std::map<K, V>& preset) {
  if (field.empty()) field = preset;
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

void fill_sampling_fields(SamplingFields& sampling, const SamplingFields& preset) {
  fill(sampling.max_tokens, preset.max_tokens);
  fill(sampling.temperature, preset.temperature);
  fill(sampling.top_p, preset.top_p);
  fill(sampling.top_k, preset.top_k);
  fill(sampling.min_p, preset.min_p);
  fill(sampling.frequency_penalty, preset.frequency_penalty);
  fill(sampling.presence_penalty, preset.presence_penalty);
  fill(sampling.seed, preset.seed);
  fill(sampling.stop, preset.stop);
  fill(sampling.logit_bias, preset.logit_bias);
  fill(sampling.logit_bias_text, preset.logit_bias_text);
  fill(sampling.banned_strings, preset.banned_strings);
  fill(sampling.dry_multiplier, preset.dry_multiplier);
  fill(sampling.dry_base, preset.dry_base);
  fill(sampling.dry_allowed_length, preset.dry_allowed_length);
  fill(sampling.dry_range, preset.dry_range);
  fill(sampling.dry_sequence_breakers, preset.dry_sequence_breakers);
  fill(sampling.xtc_threshold, preset.xtc_threshold);
  fill(sampling.xtc_probability, preset.xtc_probability);
  fill(sampling.top_n_sigma, preset.top_n_sigma);
  fill(sampling.mirostat, preset.mirostat);
  fill(sampling.mirostat_tau, preset.mirostat_tau);
  fill(sampling.mirostat_eta, preset.mirostat_eta);
  fill(sampling.repetition_penalty, preset.repetition_penalty);
}

void apply_preset(ChatCompletionRequest& request, const RequestPreset& preset) {
  fill_sampling_fields(request.sampling, preset.sampling);
  if (!request.context_overflow) request.context_overflow = preset.context_overflow;
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
  // A completion's prompt is raw text: neither a system prompt nor a policy
  // for dropping turns has a place in it.
  fill_sampling_fields(request.sampling, preset.sampling);
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
