#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "context_overflow_option.h"
#include "engine_options.h"
#include "preset_option.h"
#include "quire/engine/generator/draft_model.h"
#include "quire/engine/generator/generator.h"
#include "quire/engine/generator/sampler.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "tuned_sampling_options.h"

namespace CLI {
class App;
}

namespace quire::cli {

// Sampling and stopping options shared by generate, chat and replay.
struct GenerationOptions {
  bool greedy = false;
  double temperature = -1, top_p = -1, min_p = -1, typical = -1, repetition_penalty = -1;
  double frequency_penalty = 0, presence_penalty = 0;
  int top_k = -1, penalty_range = -1;
  std::int64_t seed = -1;
  int max_new = 256;
  std::vector<std::string> stop;
  std::vector<std::string> banned_strings;
  // "TEXT=BIAS": the bias for every token of TEXT as the tokenizer spells it.
  std::vector<std::string> text_biases;
  TunedSamplingOptions tuned;  // DRY, XTC, top-nσ, mirostat
  // --preset and --presets.
  PresetOption presets;
  // The preset's request fields: its DRY, XTC, top-nσ and mirostat apply
  // beneath the options above (empty without a preset, or with --greedy).
  server::SamplingFields preset_sampling;
  // The preset's text biases, beneath --logit-bias-text's (a token both
  // name takes the option's bias). Its banned strings join --ban-string's.
  std::map<std::string, double> preset_text_biases;
  CLI::Option* max_new_option = nullptr;

  void add_to(CLI::App& command);
  // Loads --preset and takes its sampling (every sampler), longest reply and
  // context policy (into `overflow`) where these options are silent
  // (--greedy keeps its settings); returns the preset for the command's own
  // options (system prompt, format). Its banned strings and text biases
  // apply with --greedy too: they constrain the text, not the sampling.
  // Throws UsageError.
  std::optional<PresetValues> apply_preset(ContextOverflowOption& overflow);
  engine::SamplingSettings sampling() const;
  // The banned strings and the text biases, which need the model's
  // tokenizer; throws UsageError naming a malformed --logit-bias-text.
  void apply_text_options(engine::JobRequest& request, const engine::Tokenizer& tokenizer) const;
};

// A model ready to generate with: description, tokenizer, backend, runtime
// and generator, built from the shared options.
struct LoadedSession {
  std::shared_ptr<const engine::ModelDescription> model;
  std::unique_ptr<engine::Tokenizer> tokenizer;
  std::unique_ptr<kernels::Backend> backend;
  std::unique_ptr<engine::ModelRuntime> runtime;
  // The draft model (--draft DIR), loaded beside the model; null without one.
  std::unique_ptr<engine::LoadedDraftModel> draft;
  std::unique_ptr<engine::Generator> generator;
};

// `context`: tokens of KV cache when --context is not given.
// `draft_directory`: a draft model to load beside the model and set on the
// generator (empty: none). `disk`: the disk tier to open on the runtime
// (DiskCacheOptions::tier_options); one that cannot open is said on stderr
// and left out.
LoadedSession load_session(const std::string& directory, const EngineOptions& engine,
                           std::int64_t context, int max_batch = 4,
                           const std::string& draft_directory = {},
                           const std::optional<engine::DiskTierOptions>& disk = std::nullopt);

}  // namespace quire::cli
