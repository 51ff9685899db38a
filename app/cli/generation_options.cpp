#include "generation_options.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli_support.h"
#include "disk_cache_option.h"
#include "quire/engine/generator/text_bias.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/kernels/fault_injecting_backend.h"
#include "quire/server/completion_job.h"

namespace quire::cli {

void GenerationOptions::add_to(CLI::App& command) {
  command.add_flag("--greedy", greedy, "Always take the most likely token");
  command.add_option("--temperature", temperature, "Sampling temperature (default 0.8)");
  command.add_option("--top-k", top_k, "Keep the k most likely tokens (default 50; 0: off)");
  command.add_option("--top-p", top_p,
                     "Keep the most likely tokens up to this probability (default 0.8)");
  command.add_option("--min-p", min_p, "Drop tokens below this fraction of the best (default 0)");
  command.add_option("--typical", typical, "Locally typical sampling mass (default 1: off)");
  command.add_option("--repetition-penalty", repetition_penalty,
                     "Repetition penalty (default 1.025)");
  command.add_option("--penalty-range", penalty_range,
                     "Tokens the penalties look back (default 1024)");
  command.add_option("--frequency-penalty", frequency_penalty, "Frequency penalty");
  command.add_option("--presence-penalty", presence_penalty, "Presence penalty");
  command.add_option("--seed", seed, "Seed for reproducible sampling");
  max_new_option = command.add_option("--max-new", max_new, "Most tokens to generate")
                       ->capture_default_str()
                       ->check(CLI::Range(0, 1 << 20));
  command.add_option("--stop", stop, "Stop at this text (repeatable)");
  command.add_option("--ban-string", banned_strings,
                     "Never show this text, in any case: the reply goes back and chooses again "
                     "where it began (repeatable)");
  command.add_option("--logit-bias-text", text_biases,
                     "TEXT=BIAS: add BIAS (-100 to 100) to the logit of every token of TEXT "
                     "(repeatable)");
  tuned.add_to(command);
  presets.add_to(command);
}

std::optional<PresetValues> GenerationOptions::apply_preset(ContextOverflowOption& overflow) {
  std::optional<PresetValues> preset = presets.load();
  if (!preset) return std::nullopt;
  const server::SamplingFields& values = preset->values.sampling;
  // -1: not given on the command line.
  const auto fill = [](double& option, const std::optional<double>& value) {
    if (option < 0 && value) option = *value;
  };
  if (!greedy) {
    fill(temperature, values.temperature);
    fill(top_p, values.top_p);
    fill(min_p, values.min_p);
    fill(repetition_penalty, values.repetition_penalty);
    preset_sampling = values;
  }
  if (!given(max_new_option) && values.max_tokens) max_new = static_cast<int>(*values.max_tokens);
  banned_strings.insert(banned_strings.begin(), values.banned_strings.begin(),
                        values.banned_strings.end());
  preset_text_biases = values.logit_bias_text;
  overflow.fill(preset->values.context_overflow);
  return preset;
}

void GenerationOptions::apply_text_options(engine::JobRequest& request,
                                           const engine::Tokenizer& tokenizer) const {
  request.banned_strings = banned_strings;
  for (const auto& [text, bias] : preset_text_biases) {
    if (!engine::add_text_bias(request.sampling, tokenizer, text, static_cast<float>(bias)))
      throw UsageError("the preset's logit_bias: \"" + text + "\" has no tokens");
  }
  for (const std::string& option : text_biases) {
    const std::size_t equals = option.rfind('=');
    const std::string text = equals == std::string::npos ? option : option.substr(0, equals);
    double bias = 0;
    bool parsed = equals != std::string::npos && equals + 1 < option.size();
    if (parsed) {
      try {
        std::size_t used = 0;
        bias = std::stod(option.substr(equals + 1), &used);
        parsed = used == option.size() - equals - 1;
      } catch (const std::exception&) {
        parsed = false;
      }
    }
    if (!parsed || text.empty() || !(bias >= -100 && bias <= 100)) {
      throw UsageError(
          "--logit-bias-text takes TEXT=BIAS with a bias from -100 to 100, e.g. "
          "\" Sure=-5\"; \"" +
          option + "\" is not one");
    }
    if (!engine::add_text_bias(request.sampling, tokenizer, text, static_cast<float>(bias)))
      throw UsageError("--logit-bias-text: \"" + text + "\" has no tokens");
  }
}

engine::SamplingSettings GenerationOptions::sampling() const {
  engine::SamplingSettings settings =
      greedy ? engine::SamplingSettings::greedy_settings() : engine::SamplingSettings{};
  // The preset's samplers first, so that each option given overrides its own.
  server::apply_tuned_fields(settings, preset_sampling);
  if (temperature >= 0) settings.temperature = static_cast<float>(temperature);
  if (top_k >= 0) settings.top_k = top_k;
  if (top_p >= 0) settings.top_p = static_cast<float>(top_p);
  if (min_p >= 0) settings.min_p = static_cast<float>(min_p);
  if (typical >= 0) settings.typical = static_cast<float>(typical);
  if (repetition_penalty >= 0) settings.repetition_penalty = static_cast<float>(repetition_penalty);
  if (penalty_range >= 0) settings.penalty_range = penalty_range;
  settings.frequency_penalty = static_cast<float>(frequency_penalty);
  settings.presence_penalty = static_cast<float>(presence_penalty);
  if (seed >= 0) settings.seed = static_cast<std::uint64_t>(seed);
  tuned.apply(settings);
  return settings;
}

LoadedSession load_session(const std::string& directory, const EngineOptions& engine,
                           std::int64_t context, int max_batch, const std::string& draft_directory,
                           const std::optional<engine::DiskTierOptions>& disk) {
  LoadedSession session;
  session.model =
      std::make_shared<const engine::ModelDescription>(engine::ModelDescription::open(directory));
  session.tokenizer = std::make_unique<engine::Tokenizer>(engine::Tokenizer::load(directory));
  // Before any weight is read: tokenizer files of another model are refused at once.
  engine::check_tokenizer_fits_model(*session.tokenizer, *session.model);
  engine::RuntimeOptions runtime = engine.runtime_options();
  if (runtime.cache_tokens == 0) runtime.cache_tokens = context;
  runtime.max_sequences = max_batch + 1;
  session.backend = engine.make_backend();
  // Out-of-memory handling checked by hand (main.cpp's help lists the variables).
  if (kernels::FaultPlan faults = kernels::fault_plan_from_environment(); !faults.empty()) {
    session.backend =
        std::make_unique<kernels::FaultInjectingBackend>(std::move(session.backend), faults);
  }
  runtime = engine.fitted(*session.model, *session.backend, runtime);
  session.runtime =
      std::make_unique<engine::ModelRuntime>(session.model, *session.backend, runtime);
  // Before the generator: pages found on disk serve its first admission.
  if (disk) open_disk_cache(*session.runtime, *disk, std::cerr);
  engine::GeneratorConfig config;
  config.max_batch_size = max_batch;
  config.max_step_tokens = runtime.max_chunk_tokens;
  session.generator =
      std::make_unique<engine::Generator>(*session.runtime, *session.tokenizer, config);
  if (!draft_directory.empty()) {
    // After the model, so that it is planned against what the model left.
    session.draft = std::make_unique<engine::LoadedDraftModel>(
        draft_directory, *session.runtime, *session.tokenizer, *session.backend);
    session.generator->set_draft_model(&session.draft->drafter());
  }
  return session;
}

}  // namespace quire::cli
