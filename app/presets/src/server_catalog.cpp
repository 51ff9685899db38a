#include "quire/app/presets/server_catalog.h"

#include "quire/app/presets/preset_library.h"

namespace quire::presets {

namespace {

// A chat's tuned samplers as the request fields that say the same. The group
// is set as a whole, so every field is given: a preset that turns DRY off
// turns it off for the request too.
void put_tuned(server::SamplingFields& fields, const store::TunedSampling& tuned) {
  fields.dry_multiplier = tuned.dry_multiplier;
  fields.dry_base = tuned.dry_base;
  fields.dry_allowed_length = tuned.dry_allowed_length;
  fields.dry_range = tuned.dry_range;
  std::vector<std::string> breakers;
  for (const QString& breaker : tuned.dry_sequence_breakers)
    breakers.push_back(breaker.toStdString());
  fields.dry_sequence_breakers = std::move(breakers);
  fields.xtc_threshold = tuned.xtc_threshold;
  fields.xtc_probability = tuned.xtc_probability;
  fields.top_n_sigma = tuned.top_n_sigma;
  fields.mirostat = tuned.mirostat ? 2 : 0;
  fields.mirostat_tau = tuned.mirostat_tau;
  fields.mirostat_eta = tuned.mirostat_eta;
}

}  // namespace

server::RequestPreset request_preset_of(const Preset& preset) {
  const store::ChatSettings& settings = preset.settings;
  server::RequestPreset values;
  values.name = preset.name.toStdString();
  if (settings.system_prompt) values.system_prompt = settings.system_prompt->toStdString();
  server::SamplingFields& sampling = values.sampling;
  sampling.temperature = settings.temperature;
  sampling.top_p = settings.top_p;
  sampling.min_p = settings.min_p;
  sampling.repetition_penalty = settings.repetition_penalty;
  if (settings.max_new_tokens) sampling.max_tokens = *settings.max_new_tokens;
  if (settings.tuned_sampling) put_tuned(sampling, *settings.tuned_sampling);
  for (const QString& text : settings.banned_strings)
    sampling.banned_strings.push_back(text.toStdString());
  for (auto it = settings.logit_bias_text.begin(); it != settings.logit_bias_text.end(); ++it)
    sampling.logit_bias_text[it.key().toStdString()] = it.value();
  if (settings.context_overflow)
    values.context_overflow =
        engine::parse_context_policy(settings.context_overflow->toStdString());
  return values;
}

server::PresetCatalog server_catalog(const QString& dir) {
  server::PresetCatalog catalog;
  catalog.find = [dir](const std::string& name) -> std::optional<server::RequestPreset> {
    const std::optional<Preset> found = PresetLibrary(dir).find(QString::fromStdString(name));
    if (!found) return std::nullopt;
    return request_preset_of(*found);
  };
  catalog.names = [dir] {
    std::vector<std::string> names;
    for (const QString& name : PresetLibrary(dir).names())
      names.push_back(name.toStdString());
    return names;
  };
  return catalog;
}

}  // namespace quire::presets
