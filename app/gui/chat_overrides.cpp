#include "chat_overrides.h"

namespace quire::gui {

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
  request.banned_strings = settings.banned_strings;
  request.logit_bias_text = settings.logit_bias_text;
}

}  // namespace quire::gui
