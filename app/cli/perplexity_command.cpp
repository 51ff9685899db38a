// quire-cli perplexity: how well a model predicts a text, through the same
// paged cache and forward pass a chat uses, so that cache codings can be
// compared by what they cost in quality.
//
// The text's tokens are cut into windows of --window tokens, each run as one
// sequence (in chunks of --chunk-size through the cache). As llama.cpp's
// perplexity does, only the second half of each window is scored: every
// scored token then sees at least half a window of context, so the figure
// measures the model and the cache rather than the cut.
//
// With --kl-divergence the same windows run first with an FP16 cache, and
// each scored position's distribution under the chosen cache is compared
// with it (as llama.cpp's --kl-divergence compares a quantized model with
// its base): a coding's perplexity moves by noise of either sign, while its
// divergence from the FP16 cache only grows with what the coding loses.
// --reference-model takes the reference distributions from another model
// instead (the same model's FP16 weights, for a quantized one), run with an
// FP16 cache: the divergence then measures what the weights' coding loses.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
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
  int page_size = 0;  // 0: the engine's
  bool kl_divergence = false;
  std::string reference_model;  // empty: the model itself, with an FP16 cache
  bool window_given = false;    // --window on the command line, not its default
};

// The tokens per window: --window as given, which must fit the positions the
// model was trained for; without it the default, cut to those positions, so
// a model trained for 256 runs without being told.
int chosen_window(const PerplexityOptions& options, const engine::ModelConfig& config) {
  const std::int64_t trained = config.max_position_embeddings;
  if (trained <= 0 || options.window <= trained) return options.window;
  if (!options.window_given) return static_cast<int>(trained);
  throw UsageError("--window " + std::to_string(options.window) + " is longer than the " +
                   std::to_string(trained) + " positions the model was trained for");
}

// The reference distributions --kl-divergence keeps in memory are refused
// beyond this size, with the option that makes them smaller.
constexpr double kReferenceBytesLimit = 4.0 * (1 << 30);

// log p(token | row) for every token of a row of logits, in double: a
// log-softmax over the row.
std::vector<double> log_softmax(const std::vector<float>& row) {
  const float largest = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (const float logit : row)
    sum += std::exp(static_cast<double>(logit) - largest);
  const double log_sum = std::log(sum) + largest;
  std::vector<double> out(row.size());
  for (std::size_t i = 0; i < row.size(); ++i)
    out[i] = static_cast<double>(row[i]) - log_sum;
  return out;
}

// Runs every window through a runtime with these options and hands each
// scored row (the logits that predict part[i + 1]) to `visit`. Returns
// whether the cache's FP8 halves, if any, used calibrated scales.
using RowVisitor =
    std::function<void(std::size_t window, const std::vector<float>& logits, cache::TokenId next)>;
bool run_windows(const std::shared_ptr<const engine::ModelDescription>& model,
                 kernels::Backend& backend, const engine::RuntimeOptions& runtime,
                 const std::vector<cache::TokenId>& tokens, std::size_t window,
                 const RowVisitor& visit) {
  engine::ModelRuntime model_runtime(model, backend, runtime);
  const std::size_t windows = tokens.size() / window;
  for (std::size_t w = 0; w < windows; ++w) {
    const std::span<const cache::TokenId> part(tokens.data() + w * window, window);
    const std::vector<std::vector<float>> logits = model_runtime.prefill(part, true);
    // Row i predicts token i + 1.
    for (std::size_t i = window / 2; i + 1 < window; ++i)
      visit(w, logits[i], part[i + 1]);
  }
  return model_runtime.storage().calibrated_keys() || model_runtime.storage().calibrated_values();
}

// Each scored row's divergence from the FP16 cache's: KL(P_fp16 || P_coded)
// in nats, and whether both put the same token first.
struct Divergence {
  std::vector<std::vector<float>> reference;  // log-probabilities, one row per scored position
  double total = 0;
  double largest = 0;
  std::int64_t same_top = 0;
  std::int64_t rows = 0;

  void add(const std::vector<double>& log_p) {
    const std::vector<float>& ref = reference[static_cast<std::size_t>(rows)];
    // Both rows rounded to float, as the reference is kept: a row the same
    // as the reference's then diverges by exactly nothing.
    double kl = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double p = double(ref[i]);
      kl += std::exp(p) * (p - double(static_cast<float>(log_p[i])));
    }
    kl = std::max(kl, 0.0);  // rounding may leave a tiny negative sum
    total += kl;
    largest = std::max(largest, kl);
    const auto top = [](const auto& row) {
      return std::max_element(row.begin(), row.end()) - row.begin();
    };
    same_top += top(ref) == top(log_p) ? 1 : 0;
    ++rows;
  }
  double mean() const { return rows > 0 ? total / double(rows) : 0.0; }
  double same_top_fraction() const { return rows > 0 ? double(same_top) / double(rows) : 0.0; }
};

// The model --reference-model names, which must read the text as the same
// tokens and score the same vocabulary.
std::shared_ptr<const engine::ModelDescription> open_reference(
    const PerplexityOptions& options, const engine::ModelDescription& model,
    const std::vector<cache::TokenId>& tokens) {
  TextRunOptions reference = options;
  reference.directory = options.reference_model;
  const TextRun run = open_text_run(reference);
  if (run.model->config.vocab_size != model.config.vocab_size) {
    throw UsageError("--reference-model " + options.reference_model + " has a vocabulary of " +
                     std::to_string(run.model->config.vocab_size) + " tokens, the model " +
                     std::to_string(model.config.vocab_size) +
                     "; their distributions cannot be compared");
  }
  if (run.tokens != tokens) {
    throw UsageError("--reference-model " + options.reference_model +
                     " reads the text as other tokens than the model; compare models that "
                     "share a tokenizer");
  }
  return run.model;
}

int run_perplexity(const PerplexityOptions& options) {
  const auto [model, tokens] = open_text_run(options);
  const int window_tokens = chosen_window(options, model->config);
  const auto window = static_cast<std::size_t>(window_tokens);
  if (tokens.size() < window) {
    throw UsageError("the text has " + std::to_string(tokens.size()) +
                     " tokens, fewer than one --window of " + std::to_string(window) +
                     "; give a longer text or a smaller --window");
  }
  const std::size_t windows = tokens.size() / window;
  const std::size_t scored_per_window = window - 1 - window / 2;

  engine::RuntimeOptions runtime = options.engine.runtime_options();
  if (options.page_size != 0) runtime.page_size = options.page_size;
  if (runtime.cache_tokens == 0) runtime.cache_tokens = window_tokens;
  const std::unique_ptr<kernels::Backend> backend = options.engine.make_backend();
  runtime = options.engine.fitted(*model, *backend, runtime);

  std::optional<Divergence> divergence;
  if (options.kl_divergence) {
    const double bytes = double(windows * scored_per_window) * double(model->config.vocab_size) *
                         double(sizeof(float));
    if (bytes > kReferenceBytesLimit) {
      throw UsageError("--kl-divergence would keep " + std::to_string(std::llround(bytes / 1e9)) +
                       " GB of FP16-cache distributions in memory; give --max-tokens to score "
                       "less of the text");
    }
    divergence.emplace();
    divergence->reference.reserve(windows * scored_per_window);
    std::shared_ptr<const engine::ModelDescription> reference_model = model;
    engine::RuntimeOptions reference = runtime;
    if (!options.reference_model.empty()) {
      reference_model = open_reference(options, *model, tokens);
      reference = options.engine.runtime_options();
      if (options.page_size != 0) reference.page_size = options.page_size;
      if (reference.cache_tokens == 0) reference.cache_tokens = window_tokens;
      reference = options.engine.fitted(*reference_model, *backend, reference);
    }
    reference.cache_format = cache::CacheFormat::FP16;
    run_windows(reference_model, *backend, reference, tokens, window,
                [&](std::size_t, const std::vector<float>& logits, cache::TokenId) {
                  const std::vector<double> log_p = log_softmax(logits);
                  divergence->reference.emplace_back(log_p.begin(), log_p.end());
                });
  }

  double total = 0;
  std::int64_t scored = 0;
  std::vector<double> window_totals(windows, 0.0);
  const bool calibrated =
      run_windows(model, *backend, runtime, tokens, window,
                  [&](std::size_t w, const std::vector<float>& logits, cache::TokenId next) {
                    const std::vector<double> log_p = log_softmax(logits);
                    window_totals[w] -= log_p[static_cast<std::size_t>(next)];
                    total -= log_p[static_cast<std::size_t>(next)];
                    ++scored;
                    if (divergence) divergence->add(log_p);
                  });
  nlohmann::json per_window = nlohmann::json::array();
  for (std::size_t w = 0; w < windows; ++w) {
    per_window.push_back(std::exp(window_totals[w] / static_cast<double>(scored_per_window)));
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
  const std::string fp8_scales = !has_fp8 ? "" : calibrated ? "calibrated" : "per page";
  const int window_slots = engine::residual_window_slots(runtime);
  if (options.json) {
    nlohmann::json out = {{"model", options.directory},
                          {"text", options.text_file},
                          {"cache_format", std::string(format.name)},
                          {"cache_bits_per_element", format.bits_per_element()},
                          {"fp8_scales", has_fp8 ? nlohmann::json(fp8_scales) : nlohmann::json()},
                          {"window", window_tokens},
                          {"page_size", runtime.page_size},
                          {"residual_window", window_slots},
                          {"windows", windows},
                          {"text_tokens", tokens.size()},
                          {"scored_tokens", scored},
                          {"mean_negative_log_likelihood", total / static_cast<double>(scored)},
                          {"perplexity", perplexity},
                          {"window_perplexities", per_window}};
    if (divergence) {
      out["kl_divergence"] = {
          {"mean", divergence->mean()},
          {"largest", divergence->largest},
          {"same_top_token", divergence->same_top_fraction()},
          {"reference_model",
           options.reference_model.empty() ? options.directory : options.reference_model}};
    }
    std::cout << out.dump(1) << '\n';
  } else {
    std::cout << "perplexity " << perplexity << " over " << scored << " tokens (" << windows
              << " windows of " << window_tokens << ", cache " << format.name
              << (has_fp8 ? " with " + fp8_scales + " FP8 scales" : std::string()) << ", "
              << format.bits_per_element() << " bits per element"
              << (window_slots > 0 ? ", residual window" : "") << ", pages of " << runtime.page_size
              << ")\n";
    if (divergence) {
      std::cout << "KL divergence from "
                << (options.reference_model.empty() ? std::string("the FP16 cache")
                                                    : options.reference_model + " (FP16 cache)")
                << ": mean " << divergence->mean() << ", largest " << divergence->largest
                << "; same top token at " << 100.0 * divergence->same_top_fraction()
                << "% of positions\n";
    }
  }
  return 0;
}

}  // namespace

void add_perplexity_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<PerplexityOptions>();
  CLI::App* command = app.add_subcommand(
      "perplexity", "How well the model predicts a text, through the paged cache (--cache)");
  add_text_run_options(*command, *options, "A UTF-8 text file",
                       "Tokens per window; the second half of each is scored (default 512, or the "
                       "positions the model was trained for when fewer)");
  command->add_flag("--json", options->json, "Print the result as JSON");
  // Smaller pages than a chat's put less of each window in the open page,
  // the one the residual window keeps in FP16: a short-context model can
  // then show what the window does for the contexts of larger ones.
  command
      ->add_option("--page-size", options->page_size,
                   "Tokens per cache page (default 256); smaller pages seal more of each window")
      ->check(CLI::Range(1, 4096));
  command->add_flag("--kl-divergence", options->kl_divergence,
                    "Also run the windows with an FP16 cache and report each scored position's "
                    "KL divergence from it");
  command
      ->add_option("--reference-model", options->reference_model,
                   "With --kl-divergence: the reference distributions from this model (say, "
                   "the FP16 weights of a quantized one), with an FP16 cache")
      ->type_name("DIR");
  command->callback([options, command, &exit_code] {
    if (!options->reference_model.empty() && !options->kl_divergence) {
      throw UsageError(
          "--reference-model gives --kl-divergence its reference; add "
          "--kl-divergence");
    }
    options->window_given = command->count("--window") > 0;
    exit_code = run_perplexity(*options);
  });
}

}  // namespace quire::cli
