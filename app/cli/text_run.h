#pragma once

// What the commands that run a model over a text file share (perplexity,
// calibrate-kv): the options that name the model, the text and how much of
// it to use, and the step that opens the model and tokenizes the text.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine_options.h"
#include "quire/cache/types.h"
#include "quire/engine/runtime/model_description.h"

namespace quire::cli {

struct TextRunOptions {
  std::string directory;
  std::string text_file;
  int window = 512;
  std::int64_t max_tokens = 0;  // 0: the whole text
  EngineOptions engine;
};

// Adds the model directory, --text, --window (described by window_help),
// --max-tokens and the engine's options to a command.
void add_text_run_options(CLI::App& command, TextRunOptions& options, const std::string& text_help,
                          const std::string& window_help);

struct TextRun {
  std::shared_ptr<const engine::ModelDescription> model;
  std::vector<cache::TokenId> tokens;  // the text, cut to --max-tokens
};

// Opens the model and its tokenizer (refusing one that does not fit the
// model) and tokenizes the text. A window under 2 tokens or an unreadable
// text is a UsageError naming the option.
TextRun open_text_run(const TextRunOptions& options);

}  // namespace quire::cli
