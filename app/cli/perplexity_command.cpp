// quire-cli perplexity: how well a model predicts a text, through the same
// paged cache and forward pass a chat uses, so that cache codings can be
// compared by what they cost in quality.
//
// The text's tokens are cut into windows of --window tokens, each run as one
// sequence (in chunks of --chunk-size through the cache). As llama.cpp's
// perplexity does, only the second half of each window is scored: every
// scored token then sees at least half a window of context, so the figure
// measures the model and the cache rather than the cut.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_support.h"
#include "engine_options.h"
#include "model_commands.h"
#include "quire/cache/cache_format.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {
namespace {

struct PerplexityOptions {
  std::string directory;
  std::string text_file;
  int window = 512;
  std::int64_t max_tokens = 0;  // 0: the whole text
  bool json = false;
  EngineOptions engine;
};

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError("--text " + path + ": cannot be read");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// -log p(token | row) from a row of logits, in double: a softmax over the row.
double negative_log_likelihood(const std::vector<float>& row, cache::TokenId token) {
  const float largest = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (const float logit : row)
    sum += std::exp(static_cast<double>(logit) - largest);
  return std::log(sum) + largest - static_cast<double>(row[static_cast<std::size_t>(token)]);
}

int run_perplexity(const PerplexityOptions& options) {
  if (options.window < 2) throw UsageError("--window must be at least 2 tokens");
  auto model = std::make_shared<const engine::ModelDescription>(
      engine::ModelDescription::open(options.directory));
  if (model->config.max_position_embeddings > 0 &&
      options.window > model->config.max_position_embeddings) {
    throw UsageError("--window " + std::to_string(options.window) + " is longer than the " +
                     std::to_string(model->config.max_position_embeddings) +
                     " positions the model was trained for");
  }
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(options.directory);
  engine::check_tokenizer_fits_model(tokenizer, *model);
  std::vector<cache::TokenId> tokens =
      tokenizer.encode(read_text(options.text_file), tokenizer.adds_bos());
  if (options.max_tokens > 0 && static_cast<std::int64_t>(tokens.size()) > options.max_tokens) {
    tokens.resize(static_cast<std::size_t>(options.max_tokens));
  }
  const auto window = static_cast<std::size_t>(options.window);
  if (tokens.size() < window) {
    throw UsageError("the text has " + std::to_string(tokens.size()) +
                     " tokens, fewer than one --window of " + std::to_string(window) +
                     "; give a longer text or a smaller --window");
  }

  engine::RuntimeOptions runtime = options.engine.runtime_options();
  if (runtime.cache_tokens == 0) runtime.cache_tokens = options.window;
  const std::unique_ptr<kernels::Backend> backend = options.engine.make_backend();
  runtime = options.engine.fitted(*model, *backend, runtime);
  engine::ModelRuntime model_runtime(model, *backend, runtime);

  double total = 0;
  std::int64_t scored = 0;
  const std::size_t windows = tokens.size() / window;
  nlohmann::json per_window = nlohmann::json::array();
  for (std::size_t w = 0; w < windows; ++w) {
    const std::span<const cache::TokenId> part(tokens.data() + w * window, window);
    const std::vector<std::vector<float>> logits = model_runtime.prefill(part, true);
    double window_total = 0;
    // Row i predicts token i + 1.
    for (std::size_t i = window / 2; i + 1 < window; ++i)
      window_total += negative_log_likelihood(logits[i], part[i + 1]);
    const auto window_scored = static_cast<std::int64_t>(window - 1 - window / 2);
    total += window_total;
    scored += window_scored;
    per_window.push_back(std::exp(window_total / static_cast<double>(window_scored)));
    if (!options.json) {
      std::cerr << "perplexity: window " << (w + 1) << " of " << windows << ": "
                << per_window.back().get<double>() << '\n';
    }
  }
  const double perplexity = std::exp(total / static_cast<double>(scored));
  const cache::CacheFormatInfo& format = cache::format_info(runtime.cache_format);
  // How the FP8 halves, if any, scale: with the checkpoint's calibrated
  // scales, or per page.
  const bool has_fp8 = runtime.cache_format.key == cache::ElementCoding::FP8 ||
                       runtime.cache_format.value == cache::ElementCoding::FP8;
  const bool calibrated =
      model_runtime.storage().calibrated_keys() || model_runtime.storage().calibrated_values();
  const std::string fp8_scales = !has_fp8 ? "" : calibrated ? "calibrated" : "per page";
  if (options.json) {
    nlohmann::json out = {{"model", options.directory},
                          {"text", options.text_file},
                          {"cache_format", std::string(format.name)},
                          {"cache_bits_per_element", format.bits_per_element()},
                          {"fp8_scales", has_fp8 ? nlohmann::json(fp8_scales) : nlohmann::json()},
                          {"window", options.window},
                          {"windows", windows},
                          {"text_tokens", tokens.size()},
                          {"scored_tokens", scored},
                          {"mean_negative_log_likelihood", total / static_cast<double>(scored)},
                          {"perplexity", perplexity},
                          {"window_perplexities", per_window}};
    std::cout << out.dump(1) << '\n';
  } else {
    std::cout << "perplexity " << perplexity << " over " << scored << " tokens (" << windows
              << " windows of " << options.window << ", cache " << format.name
              << (has_fp8 ? " with " + fp8_scales + " FP8 scales" : std::string()) << ", "
              << format.bits_per_element() << " bits per element)\n";
  }
  return 0;
}

}  // namespace

void add_perplexity_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PerplexityOptions>();
  CLI::App* command = app.add_subcommand(
      "perplexity", "How well the model predicts a text, through the paged cache (--cache)");
  command->add_option("directory", options->directory, "Model directory")->required();
  command->add_option("--text", options->text_file, "A UTF-8 text file")->required();
  command->add_option("--window", options->window,
                      "Tokens per window; the second half of each is scored (default 512)");
  command->add_option("--max-tokens", options->max_tokens,
                      "Use only the text's first N tokens (default all)");
  command->add_flag("--json", options->json, "Print the result as JSON");
  options->engine.add_to(*command, true);
  command->callback([options, &exit_code] { exit_code = run_perplexity(*options); });
}

}  // namespace quire::cli
