#include "quantize_exl3.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

#include "cli_support.h"
#include "quantize_calibration.h"
#include "quire/engine/formats/exl3_plan.h"
#include "quire/engine/modelgen/random_stream.h"

namespace quire::cli {
namespace {

namespace fs = std::filesystem;
namespace formats = engine::formats;
namespace io = engine::io;

// Which allocation group a projection belongs to: the layer's q, k and v;
// its o; gate and up; down.
int group_kind(const std::string& rest) {
  if (rest.starts_with("self_attn.o_proj")) return 1;
  if (rest.starts_with("self_attn.")) return 0;
  if (rest.starts_with("mlp.down_proj")) return 3;
  return 2;
}

// Each projection's width, from exllamav3's allocation over the groups.
std::map<std::string, int> plan_widths(const io::ModelTensors& tensors,
                                       const std::vector<std::string>& names, double bits,
                                       double& average) {
  std::map<std::pair<long, int>, std::size_t> group_of;
  std::vector<formats::Exl3BitGroup> groups;
  std::map<std::string, std::size_t> member_of;
  for (const std::string& name : names) {
    if (!is_layer_linear(name)) continue;
    const auto [layer, rest] = *split_layer_name(name);
    const int kind = group_kind(rest);
    const auto [at, added] = group_of.try_emplace({layer, kind}, groups.size());
    if (added) groups.push_back({0, kind < 2 ? 2 : 1, static_cast<int>(layer)});
    groups[at->second].weights += tensors.get(name).info->elements();
    member_of[name] = at->second;
  }
  std::map<std::string, int> widths;
  if (groups.empty()) return widths;
  const formats::Exl3BitPlan plan = formats::plan_exl3_bits(groups, bits);
  for (const auto& [name, group] : member_of)
    widths[name] = plan.bits[group];
  average = plan.bits_per_weight;
  return widths;
}

}  // namespace

Exl3Written add_exl3_tensors(const fs::path& in, const io::ModelTensors& tensors,
                             const engine::ModelConfig& config, const Exl3Settings& settings,
                             io::SafetensorsWriter& writer, std::ostream& progress) {
  const std::vector<std::string> names = ordered_tensor_names(tensors);
  Exl3Written written;
  const std::map<std::string, int> widths =
      plan_widths(tensors, names, settings.bits, written.config.bits);
  Calibration calibration;
  if (!settings.calibration.empty()) {
    calibration =
        calibrate(in, tensors, {settings.calibration, settings.calibration_tokens}, progress);
  }

  const bool head_coded = !config.tie_word_embeddings && settings.head_bits != 16;
  const std::size_t total = widths.size() + (head_coded && tensors.find("lm_head.weight") ? 1 : 0);
  std::size_t done = 0;
  QuantizeSummary& summary = written.summary;
  for (const std::string& name : names) {
    const io::TensorInfo& info = *tensors.get(name).info;
    const bool layer_linear = widths.contains(name);
    const bool head = name == "lm_head.weight";
    if (head && config.tie_word_embeddings) continue;  // the embeddings serve as the head
    std::vector<float> values = tensor_floats(tensors, name);
    if (!layer_linear && !(head && head_coded)) {
      writer.add(name, kernels::DType::F16, info.shape, to_half_bytes(values));
      continue;
    }
    if (info.shape.size() != 2) {
      throw UsageError("IN: tensor " + name + " has shape " + io::format_shape(info.shape) +
                       ", not [out, in]");
    }
    const std::string key = name.substr(0, name.size() - std::string_view(".weight").size());
    formats::Exl3QuantizeOptions options;
    options.bits = layer_linear ? widths.at(name) : settings.head_bits;
    options.codebook = settings.codebook;
    // Signs from the seed and the layer's name, so the same input gives the
    // same file.
    options.seed = engine::modelgen::RandomStream(settings.seed, key + "#exl3").next();
    options.out_scales = settings.out_scales;
    options.threads = settings.threads;
    if (const auto found = calibration.hessians.find(key); found != calibration.hessians.end()) {
      options.hessian = found->second->sum;
      options.hessian_rows = found->second->rows;
    }
    const auto start = std::chrono::steady_clock::now();
    formats::Exl3QuantizeReport report;
    const formats::Exl3Encoding encoding =
        formats::quantize_exl3(values, info.shape[0], info.shape[1], options, &report);
    for (formats::NamedTensor& tensor : encoding.tensors()) {
      writer.add(key + "." + tensor.suffix, tensor.dtype, std::move(tensor.shape),
                 std::move(tensor.bytes));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::ostringstream line;
    line << std::fixed << std::setprecision(3) << "quantize: [" << ++done << '/' << total << "] "
         << key << ": " << options.bits << " bits, scale " << report.global_scale
         << (report.out_scales ? ", output scales" : "") << std::setprecision(5)
         << ", weight error " << report.weight_error;
    // Over the calibration inputs: the error in the layer's outputs.
    if (report.error_feedback) line << ", output error " << report.proxy_error;
    line << std::setprecision(1) << ", " << seconds << " s (" << std::setprecision(0)
         << double(report.tiles_coded) / std::max(seconds, 1e-9) << " tiles/s)\n";
    progress << line.str() << std::flush;
    summary.quantized_bits += double(options.bits) * double(info.elements());
    summary.quantized_weights += double(info.elements());
    if (layer_linear) ++summary.linear_layers;
    summary.head_quantized = summary.head_quantized || head;
  }
  summary.tensors = writer.size();
  written.config.head_bits = head_coded ? settings.head_bits : 16;
  written.config.codebook = settings.codebook;
  written.config.out_scales = settings.out_scales == formats::Exl3OutScales::always  ? "always"
                              : settings.out_scales == formats::Exl3OutScales::never ? "never"
                                                                                     : "auto";
  if (calibration.rows > 0) {
    written.config.calibration =
        engine::modelgen::Exl3ConfigSettings::Calibration{calibration.rows, calibration.columns};
  }
  written.calibration_tokens = calibration.tokens;
  return written;
}

}  // namespace quire::cli
