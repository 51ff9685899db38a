#include "chat_overrides.h"

namespace quire::gui {

ui::TunedSampling to_ui(const store::TunedSampling& tuned) {
  ui::TunedSampling out;
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

store::TunedSampling to_store(const ui::TunedSampling& tuned) {
  store::TunedSampling out;
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

ui::ChatOverrides to_overrides(const store::ChatSettings& settings) {
  ui::ChatOverrides overrides;
  overrides.system_prompt = settings.system_prompt;
  overrides.temperature = settings.temperature;
  overrides.top_p = settings.top_p;
  overrides.min_p = settings.min_p;
  overrides.repetition_penalty = settings.repetition_penalty;
  overrides.max_new_tokens = settings.max_new_tokens;
  overrides.prompt_format = settings.prompt_format;
  overrides.use_tools = settings.tools_enabled;
  if (settings.tuned_sampling) overrides.tuned_sampling = to_ui(*settings.tuned_sampling);
  overrides.context_overflow = settings.context_overflow;
  return overrides;
}

store::ChatSettings to_chat_settings(const ui::ChatOverrides& overrides) {
  store::ChatSettings settings;
  settings.system_prompt = overrides.system_prompt;
  settings.temperature = overrides.temperature;
  settings.top_p = overrides.top_p;
  settings.min_p = overrides.min_p;
  settings.repetition_penalty = overrides.repetition_penalty;
  settings.max_new_tokens = overrides.max_new_tokens;
  settings.prompt_format = overrides.prompt_format;
  settings.tools_enabled = overrides.use_tools;
  if (overrides.tuned_sampling) settings.tuned_sampling = to_store(*overrides.tuned_sampling);
  settings.context_overflow = overrides.context_overflow;
  return settings;
}

ui::ChatDefaults chat_defaults(const ui::EngineSettings& settings, int max_new_tokens) {
  ui::ChatDefaults defaults;
  defaults.system_prompt = settings.system_prompt;
  defaults.sampling = settings.sampling;
  defaults.max_new_tokens = max_new_tokens;
  defaults.prompt_format = settings.prompt_format;
  defaults.context_overflow = settings.context_overflow;
  return defaults;
}

void apply_chat_settings(const store::ChatSettings& settings, ReplyRequest& request) {
  if (settings.system_prompt) request.system_prompt = *settings.system_prompt;
  if (settings.prompt_format) request.prompt_format = *settings.prompt_format;
  if (settings.temperature) request.sampling.temperature = *settings.temperature;
  if (settings.top_p) request.sampling.top_p = *settings.top_p;
  if (settings.min_p) request.sampling.min_p = *settings.min_p;
  if (settings.repetition_penalty) {
    request.sampling.repetition_penalty = *settings.repetition_penalty;
  }
  if (settings.max_new_tokens) request.max_new_tokens = *settings.max_new_tokens;
  if (settings.tuned_sampling) request.sampling.tuned = to_ui(*settings.tuned_sampling);
  if (settings.context_overflow) request.context_overflow = *settings.context_overflow;
}

}  // namespace quire::gui
