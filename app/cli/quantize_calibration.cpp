#include "quantize_calibration.h"

#include <algorithm>
#include <ostream>
#include <span>
#include <vector>

#include "cli_support.h"
#include "engine_options.h"
#include "quantize_support.h"
#include "quire/engine/generator/vocabulary_check.h"
#include "quire/engine/runtime/model_runtime.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::cli {
namespace {

// exllamav3 calibrates on rows of 2048 tokens; a model trained on fewer
// positions gets rows of its own context.
constexpr std::int64_t kCalibrationRow = 2048;

}  // namespace

Calibration calibrate(const std::filesystem::path& in, const engine::io::ModelTensors& tensors,
                      const CalibrationText& text_file, std::ostream& progress) {
  const std::string text = read_file_text(text_file.path);
  auto model = std::make_shared<const engine::ModelDescription>(engine::ModelDescription::open(in));
  const engine::Tokenizer tokenizer = engine::Tokenizer::load(in);
  engine::check_tokenizer_fits_model(tokenizer, *model);
  std::vector<cache::TokenId> tokens = tokenizer.encode(text, tokenizer.adds_bos());
  if (text_file.tokens > 0 && std::int64_t(tokens.size()) > text_file.tokens) {
    tokens.resize(std::size_t(text_file.tokens));
  }
  if (tokens.size() < 16) {
    throw UsageError("--calibration " + text_file.path + " holds " + std::to_string(tokens.size()) +
                     " tokens; give a longer text");
  }
  std::int64_t row = kCalibrationRow;
  if (model->config.max_position_embeddings > 0) {
    row = std::min(row, model->config.max_position_embeddings);
  }

  const EngineOptions engine_options;
  const std::unique_ptr<kernels::Backend> backend = engine_options.make_backend();
  engine::RuntimeOptions options = engine_options.runtime_options();
  options.cache_tokens = row;
  options.step_graphs = false;
  options = engine_options.fitted(*model, *backend, options);
  engine::ModelRuntime runtime(model, *backend, options);
  engine::LinearInputHessians collector(runtime);
  Calibration calibration;
  calibration.columns = static_cast<int>(row);
  for (std::size_t first = 0; first < tokens.size(); first += std::size_t(row)) {
    const std::size_t count = std::min(std::size_t(row), tokens.size() - first);
    if (count < 2) break;
    collector.observe(std::span<const cache::TokenId>(tokens.data() + first, count));
    ++calibration.rows;
    progress << "quantize: calibration: " << (first + count) << " of " << tokens.size()
             << " tokens\n";
  }
  calibration.tokens = collector.tokens_observed();
  std::map<const engine::LinearInputHessian*, std::shared_ptr<const engine::LinearInputHessian>>
      copies;
  for (const std::string& name : ordered_tensor_names(tensors)) {
    if (!name.ends_with(".weight")) continue;
    const std::string module = name.substr(0, name.size() - std::string_view(".weight").size());
    const engine::LinearInputHessian* sum = collector.find(module);
    if (sum == nullptr) continue;
    std::shared_ptr<const engine::LinearInputHessian>& copy = copies[sum];
    if (!copy) copy = std::make_shared<const engine::LinearInputHessian>(*sum);
    calibration.hessians[module] = copy;
  }
  return calibration;
}

}  // namespace quire::cli
