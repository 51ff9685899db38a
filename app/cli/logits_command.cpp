// quire-cli logits: the model's output for a list of token ids, as JSON.

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "engine_options.h"
#include "hub_model_option.h"
#include "model_commands.h"
#include "quire/engine/runtime/model_runtime.h"

namespace quire::cli {
namespace {

struct LogitsOptions {
  std::string directory;
  std::string tokens;
  bool all = false;
  EngineOptions engine;
};

int run_logits(const LogitsOptions& options) {
  const std::vector<std::int32_t> tokens = parse_token_list(options.tokens);
  auto model = std::make_shared<const engine::ModelDescription>(
      engine::ModelDescription::open(options.directory));
  for (const std::int32_t token : tokens) {
    if (token >= model->config.vocab_size) {
      throw UsageError("token id " + std::to_string(token) + " lies outside the vocabulary of " +
                       std::to_string(model->config.vocab_size));
    }
  }
  engine::RuntimeOptions runtime = options.engine.runtime_options();
  if (runtime.cache_tokens == 0) runtime.cache_tokens = static_cast<std::int64_t>(tokens.size());
  const std::unique_ptr<kernels::Backend> backend = options.engine.make_backend();
  runtime = options.engine.fitted(*model, *backend, runtime);
  engine::ModelRuntime model_runtime(model, *backend, runtime);
  const std::vector<std::vector<float>> logits = model_runtime.prefill(tokens, options.all);

  // Plain text keeps the output small and every float exact to 9 digits.
  std::cout << "{\"logits\": [";
  for (std::size_t row = 0; row < logits.size(); ++row) {
    std::cout << (row ? ", [" : "[");
    for (std::size_t i = 0; i < logits[row].size(); ++i) {
      char number[32];
      std::snprintf(number, sizeof(number), "%.9g", static_cast<double>(logits[row][i]));
      std::cout << (i ? ", " : "") << number;
    }
    std::cout << ']';
  }
  std::cout << "]}\n";
  return 0;
}

}  // namespace

void add_logits_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<LogitsOptions>();
  CLI::App* command =
      app.add_subcommand("logits", "Run token ids through a model and print the logits as JSON");
  command->add_option("directory", options->directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command->add_option("--tokens", options->tokens, "Token ids, e.g. 1,2,3")->required();
  command->add_flag("--all", options->all, "Logits of every position, not only the last");
  options->engine.add_to(*command, true);
  command->callback([options, &exit_code] { exit_code = run_logits(*options); });
}

}  // namespace quire::cli
