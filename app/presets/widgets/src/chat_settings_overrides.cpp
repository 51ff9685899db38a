#include "quire/app/presets/chat_settings_overrides.h"

namespace quire::presets {
namespace {

// The store's and the panel's TunedSampling have the same fields by name.
template <typename To, typename From>
To copy_tuned_sampling(const From& tuned) {
  To out;
  out.dry_multiplier = tuned.dry_multiplier;
  out.dry_base = tuned.dry_base;
  out.dry_allowed_length = tuned.dry_allowed_length;
  out.dry_range = tuned.dry_range;
  out.dry_sequence_breakers = tuned.dry_sequence_breakers;
  out.xtc_threshold = tuned.xtc_threshold;
  out.xtc_probability = tuned.xtc_probability;
  out.top_n_sigma = tuned.top_n_sigma;
  out.mirostat = tuned.mirostat;
  out.mirostat_tau = tuned.mirostat_tau;
  out.mirostat_eta = tuned.mirostat_eta;
  return out;
}

// The fields ChatSettings and ChatOverrides name alike.
template <typename To, typename From>
To copy_same_named(const From& from) {
  To out;
  out.system_prompt = from.system_prompt;
  out.temperature = from.temperature;
  out.top_p = from.top_p;
  out.min_p = from.min_p;
  out.repetition_penalty = from.repetition_penalty;
  out.max_new_tokens = from.max_new_tokens;
  out.prompt_format = from.prompt_format;
  out.context_overflow = from.context_overflow;
  out.banned_strings = from.banned_strings;
  out.logit_bias_text = from.logit_bias_text;
  return out;
}

}  // namespace

ui::TunedSampling to_ui(const store::TunedSampling& tuned) {
  return copy_tuned_sampling<ui::TunedSampling>(tuned);
}

store::TunedSampling to_store(const ui::TunedSampling& tuned) {
  return copy_tuned_sampling<store::TunedSampling>(tuned);
}

ui::ChatOverrides to_overrides(const store::ChatSettings& settings) {
  auto overrides = copy_same_named<ui::ChatOverrides>(settings);
  overrides.use_tools = settings.tools_enabled;
  if (settings.tuned_sampling) overrides.tuned_sampling = to_ui(*settings.tuned_sampling);
  return overrides;
}

store::ChatSettings to_chat_settings(const ui::ChatOverrides& overrides) {
  auto settings = copy_same_named<store::ChatSettings>(overrides);
  settings.tools_enabled = overrides.use_tools;
  if (overrides.tuned_sampling) settings.tuned_sampling = to_store(*overrides.tuned_sampling);
  return settings;
}

}  // namespace quire::presets
