// quire-cli generate: one prompt, streamed, or one JSON object with --json.

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "context_overflow_option.h"
#include "disk_cache_option.h"
#include "draft_option.h"
#include "generation_commands.h"
#include "generation_options.h"
#include "hub_model_option.h"
#include "quire/engine/grammar/grammar.h"

namespace quire::cli {
namespace {

struct GenerateOptions {
  std::string directory;
  std::string prompt;
  std::string tokens;
  bool json = false;
  bool ignore_eos = false;
  std::string json_schema;  // a file
  bool json_object = false;
  EngineOptions engine;
  GenerationOptions generation;
  DraftOptions draft;
  DiskCacheOptions disk;
  ContextOverflowOption overflow;
};

// The grammar that --json-schema or --json-object asks for, compiled before
// the model loads so that a schema it cannot enforce is refused at once.
std::shared_ptr<const engine::grammar::Grammar> output_grammar(const GenerateOptions& options) {
  if (options.json_object) return engine::grammar::any_json_object_grammar();
  if (options.json_schema.empty()) return nullptr;
  const std::string schema = read_text_file(options.json_schema, "--json-schema");
  try {
    return engine::grammar::compile_json_schema_text(schema);
  } catch (const engine::grammar::GrammarError& error) {
    throw UsageError("--json-schema " + options.json_schema + ": " + error.what());
  }
}

// A prompt longer than --context leaves, with --max-new kept for the reply:
// cut as --context-overflow says (engine::cut_prompt), the BOS kept.
void fit_prompt(std::vector<std::int32_t>& prompt, const GenerateOptions& options,
                std::int64_t pinned) {
  if (options.engine.context <= 0) return;  // the cache is sized to fit
  const auto tokens = static_cast<std::int64_t>(prompt.size());
  const engine::PromptCut cut =
      engine::cut_prompt(options.overflow.policy(), tokens, pinned, options.engine.context,
                         options.generation.max_new);
  if (cut.drop_end == cut.drop_begin) return;
  prompt.erase(prompt.begin() + cut.drop_begin, prompt.begin() + cut.drop_end);
  std::cerr << "quire-cli: tokens " << cut.drop_begin + 1 << "\u2013" << cut.drop_end
            << " of the prompt left the context (" << cut.drop_end - cut.drop_begin << " tokens; "
            << cut.recomputed_tokens << " read again)\n";
}

int run_generate(const GenerateOptions& options) {
  if (options.prompt.empty() == options.tokens.empty()) {
    throw UsageError("give exactly one of --prompt TEXT or --tokens ids");
  }
  std::shared_ptr<const engine::grammar::Grammar> grammar = output_grammar(options);
  const engine::DraftSettings draft = options.draft.settings();
  const std::optional<engine::DiskTierOptions> disk = options.disk.tier_options();
  engine::Tokenizer probe = engine::Tokenizer::load(options.directory);
  std::vector<std::int32_t> prompt = options.tokens.empty()
                                         ? probe.encode(options.prompt, probe.adds_bos())
                                         : parse_token_list(options.tokens);
  if (prompt.empty()) throw UsageError("the prompt has no tokens");
  for (const std::int32_t token : prompt) {
    if (token >= probe.vocab_size()) {
      throw UsageError("token id " + std::to_string(token) + " lies outside the vocabulary of " +
                       std::to_string(probe.vocab_size()));
    }
  }
  fit_prompt(prompt, options, probe.adds_bos() && options.tokens.empty() ? 1 : 0);
  LoadedSession session =
      load_session(options.directory, options.engine,
                   static_cast<std::int64_t>(prompt.size()) + options.generation.max_new, 1,
                   options.draft.model_directory(), disk);

  engine::JobRequest request;
  request.prompt = prompt;
  request.sampling = options.generation.sampling();
  request.stop_strings = options.generation.stop;
  options.generation.apply_text_options(request, *session.tokenizer);
  request.stop_at_eos = !options.ignore_eos;
  request.max_new_tokens = options.generation.max_new;
  request.grammar = std::move(grammar);
  request.draft = draft;
  engine::JobResult result;
  if (!options.json) {
    request.on_text = [](engine::JobId, std::string_view text) { std::cout << text << std::flush; };
  }
  request.on_done = [&](const engine::JobResult& done) { result = done; };
  session.generator->submit(std::move(request));
  session.generator->run_until_idle();
  // What was done when device memory ran short, after the streamed text.
  const auto memory_note = [&] {
    const engine::MemoryRecoveries& memory = session.generator->memory_recoveries();
    if (memory.steps > 0) std::cerr << "quire-cli: " << memory.last << '\n';
  };
  if (result.stop_reason == engine::StopReason::Error) {
    if (!options.json) std::cout << std::endl;
    memory_note();
    throw UsageError(result.error);
  }

  const engine::JobStatistics& stats = result.statistics;
  const DraftFigures drafts = draft_figures(stats);
  if (options.json) {
    const nlohmann::ordered_json out{
        {"text", result.text},
        {"tokens", result.tokens},
        {"stop_reason", std::string(engine::to_string(result.stop_reason))},
        {"prompt_tokens", stats.prompt_tokens},
        {"cached_tokens", stats.cached_tokens},
        {"disk_tokens", stats.disk_tokens},
        {"prefill_s", stats.prefill_seconds},
        {"decode_s", stats.decode_seconds},
        {"time_to_first_token_s", stats.time_to_first_token},
        {"decode_tokens_per_s", stats.decode_tokens_per_second()},
        {"drafted_tokens", drafts.drafted},
        {"accepted_tokens", drafts.accepted},
        {"acceptance_rate", drafts.acceptance_rate},
        {"tokens_per_step", drafts.tokens_per_step},
        {"banned_rewinds", stats.banned_rewinds}};
    std::cout << out.dump() << '\n';
  } else {
    std::cout << '\n';
    std::cerr << "[" << result.tokens.size() << " tokens, " << engine::to_string(result.stop_reason)
              << ", " << stats.decode_tokens_per_second() << " tokens/s";
    // With a disk tier, what the prompt took from the cache and the disk.
    if (session.runtime->disk_tier() != nullptr) {
      std::cerr << "; " << stats.cached_tokens << " of " << stats.prompt_tokens
                << " prompt tokens from the cache" << disk_tokens_note(*session.runtime, stats);
    }
    if (draft.method != engine::DraftSettings::Method::Off)
      std::cerr << "; " << draft_summary(stats);
    std::cerr << "]\n";
  }
  memory_note();
  // The next run of this prompt, or of one that extends it, reads its pages.
  archive_disk_cache(*session.runtime, std::cerr);
  return 0;
}

}  // namespace

void add_generate_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App* command = app.add_subcommand("generate", "Generate text from a prompt");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_option("--prompt", options->prompt, "Prompt text (encoded with the model's BOS)");
  command->add_option("--tokens", options->tokens, "Prompt token ids, e.g. 1,2,3");
  command->add_flag(
      "--json", options->json,
      "Print one JSON object: text, tokens, stop_reason, prompt_tokens, "
      "cached_tokens, disk_tokens, prefill_s, decode_s, drafted_tokens, accepted_tokens, "
      "acceptance_rate, tokens_per_step, banned_rewinds");
  command->add_flag("--ignore-eos", options->ignore_eos, "Do not stop at the end-of-text token");
  CLI::Option* schema =
      command
          ->add_option("--json-schema", options->json_schema,
                       "Constrain the output to JSON that satisfies this JSON Schema file; "
                       "a keyword that cannot be enforced is refused by name")
          ->type_name("FILE");
  command
      ->add_flag("--json-object", options->json_object,
                 "Constrain the output to one JSON object (any keys and values)")
      ->excludes(schema);
  options->generation.add_to(*command);
  options->overflow.add_to(*command);
  options->draft.add_to(*command);
  options->disk.add_to(*command);
  options->engine.add_to(*command, true);
  command->callback([options, &exit_code] {
    // A raw prompt has no system message or format: the sampling, the longest
    // reply and the context policy come from a preset.
    options->generation.apply_preset(options->overflow);
    exit_code = run_generate(*options);
  });
}

}  // namespace quire::cli
