// quire-cli calibrate-kv: static FP8 scales for a model's K/V cache, from a
// text, written as llm-compressor writes them (k_scale / v_scale tensors and
// config.json's kv_cache_scheme), so that the copy loads in Quire, and in
// other engines that read that layout, with calibrated FP8 keys and values.
//
// The text runs through the same forward pass a chat uses, in windows of
// --window tokens, with an FP16 cache: every layer sees the keys and values
// the model computes from exact earlier layers, and those are what the
// scales are taken from.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "cli_support.h"
#include "model_commands.h"
#include "quire/engine/runtime/kv_calibration.h"
#include "quire/engine/runtime/model_runtime.h"
#include "text_run.h"

namespace quire::cli {
namespace {

struct CalibrateOptions : TextRunOptions {
  std::string strategy = "tensor";
  std::string out;
};

int run_calibrate(const CalibrateOptions& options) {
  const auto [model, tokens] = open_text_run(options);
  if (tokens.size() < 2) throw UsageError("--text " + options.text_file + " holds too little text");
  std::int64_t window = options.window;
  if (model->config.max_position_embeddings > 0) {
    window = std::min(window, model->config.max_position_embeddings);
  }

  engine::RuntimeOptions runtime = options.engine.runtime_options();
  // The maxima must be those of the model itself, not of a coded cache's
  // approximation of earlier layers.
  runtime.cache_format = cache::CacheFormat::FP16;
  runtime.calibrated_kv_scales = false;
  runtime.step_graphs = false;
  if (runtime.cache_tokens == 0) runtime.cache_tokens = window;
  const std::unique_ptr<kernels::Backend> backend = options.engine.make_backend();
  runtime = options.engine.fitted(*model, *backend, runtime);
  engine::ModelRuntime model_runtime(model, *backend, runtime);

  engine::KvCalibration calibration(model_runtime);
  const auto step = static_cast<std::size_t>(window);
  for (std::size_t first = 0; first < tokens.size(); first += step) {
    const std::size_t count = std::min(step, tokens.size() - first);
    if (count < 2 && first > 0) break;  // a lone last token adds nothing worth a step
    calibration.observe(std::span<const cache::TokenId>(tokens.data() + first, count));
    std::cerr << "calibrate-kv: " << (first + count) << " of " << tokens.size() << " tokens\n";
  }
  const engine::CalibratedKvScales scales = calibration.scales(options.strategy == "head");
  engine::write_calibrated_model(*model, scales, options.out);

  float key_low = 0, key_high = 0, value_low = 0, value_high = 0;
  bool first = true;
  for (const engine::LayerKvScales& layer : scales.layers) {
    const auto [k_low, k_high] = std::minmax_element(layer.key.begin(), layer.key.end());
    const auto [v_low, v_high] = std::minmax_element(layer.value.begin(), layer.value.end());
    key_low = first ? *k_low : std::min(key_low, *k_low);
    key_high = first ? *k_high : std::max(key_high, *k_high);
    value_low = first ? *v_low : std::min(value_low, *v_low);
    value_high = first ? *v_high : std::max(value_high, *v_high);
    first = false;
  }
  std::cout << "calibrated " << scales.layers.size() << " layers over "
            << calibration.tokens_observed() << " tokens, "
            << (scales.per_head ? "one scale per KV head" : "one scale per layer")
            << ": key scales " << key_low << " to " << key_high << ", value scales " << value_low
            << " to " << value_high << "\nwrote " << options.out
            << " (use it with --cache fp8, or any cache with an FP8 half)\n";
  return 0;
}

}  // namespace

void add_calibrate_kv_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* command = app.add_subcommand(
      "calibrate-kv",
      "Calibrated FP8 K/V cache scales from a text, written into a copy of the model in "
      "llm-compressor's layout");
  add_text_run_options(*command, *options, "A UTF-8 text file to calibrate on",
                       "Tokens run as one sequence (default 512, at most the model's positions)");
  command
      ->add_option("--out", options->out,
                   "The calibrated copy: a new or empty directory (other files are hard-linked "
                   "where possible, so it costs little space)")
      ->required();
  command
      ->add_option("--strategy", options->strategy,
                   "One scale per layer (tensor, the default) or per KV head (head)")
      ->check(CLI::IsMember({"tensor", "head"}));
  command->callback([options, &exit_code] { exit_code = run_calibrate(*options); });
}

}  // namespace quire::cli
