#include "text_run.h"

#include "cli_support.h"
#include "hub_model_option.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {

void add_text_run_options(CLI::App& command, TextRunOptions& options, const std::string& text_help,
                          const std::string& window_help) {
  command.add_option("directory", options.directory, kModelDirectoryHelp)
      ->required()
      ->transform(hub_model_reference());
  command.add_option("--text", options.text_file, text_help)->required();
  command.add_option("--window", options.window, window_help);
  command.add_option("--max-tokens", options.max_tokens,
                     "Use only the text's first N tokens (default all)");
  options.engine.add_to(command, true);
}

TextRun open_text_run(const TextRunOptions& options) {
  if (options.window < 2) throw UsageError("--window must be at least 2 tokens");
  TextRun run;
  run.model = std::make_shared<const engine::ModelDescription>(
      engine::ModelDescription::open(options.directory));
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(options.directory);
  engine::check_tokenizer_fits_model(tokenizer, *run.model);
  run.tokens = tokenizer.encode(read_text_file(options.text_file, "--text"), tokenizer.adds_bos());
  if (options.max_tokens > 0 && static_cast<std::int64_t>(run.tokens.size()) > options.max_tokens) {
    run.tokens.resize(static_cast<std::size_t>(options.max_tokens));
  }
  return run;
}

}  // namespace quire::cli
