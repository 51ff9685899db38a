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
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include "model_commands.h"
#include "quire/cache/cache_format.h"
#include "quire/engine/runtime/model_runtime.h"
#include "text_run.h"

namespace quire::cli {
namespace {

struct PerplexityOptions : TextRunOptions {
  bool json = false;
};

// -log p(token | row) from a row of logits, in double: a softmax over the row.
double negative_log_likelihood(const std::vector<float>& row, cache::TokenId token) {
  const float largest = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (const float logit : row)
    sum += std::exp(static_cast<double>(logit) - largest);
  return std::log(sum) + largest - static_cast<double>(row[static_cast<std::size_t>(token)]);
}

int run_perplexity(const PerplexityOptions& options) {
  const auto [model, tokens] = open_text_run(options);
  if (model->config.max_position_embeddings > 0 &&
      options.window > model->config.max_position_embeddings) {
    throw UsageError("--window " + std::to_string(options.window) + " is longer than the " +
                     std::to_string(model->config.max_position_embeddings) +
                     " positions the model was trained for");
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
  add_text_run_options(*command, *options, "A UTF-8 text file",
                       "Tokens per window; the second half of each is scored (default 512)");
  command->add_flag("--json", options->json, "Print the result as JSON");
  command->callback([options, &exit_code] { exit_code = run_perplexity(*options); });
}

}  // namespace quire::cli
