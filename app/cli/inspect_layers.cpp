#include "inspect_layers.h"

#include <sstream>
#include <utility>
#include <vector>

#include "cli_support.h"
#include "quire/engine/runtime/weights_summary.h"

namespace quire::cli {
namespace {

using Json = nlohmann::ordered_json;

// The projections a layer holds, named as its files name them.
std::vector<std::pair<std::string, const engine::LinearDescription*>> projections(
    const engine::LayerDescription& layer) {
  std::vector<std::pair<std::string, const engine::LinearDescription*>> list;
  if (layer.qkv) {
    list.emplace_back("qkv_proj", &*layer.qkv);
  } else {
    list.emplace_back("q_proj", &layer.q);
    list.emplace_back("k_proj", &layer.k);
    list.emplace_back("v_proj", &layer.v);
  }
  list.emplace_back("o_proj", &layer.o);
  if (layer.router) {
    list.emplace_back("router", &*layer.router);
  } else if (layer.gate_up) {
    list.emplace_back("gate_up_proj", &*layer.gate_up);
  } else {
    list.emplace_back("gate_proj", &layer.gate);
    list.emplace_back("up_proj", &layer.up);
  }
  if (!layer.router) list.emplace_back("down_proj", &layer.down);
  return list;
}

// Group-quantized weights (GPTQ, AWQ, compressed-tensors' integers): one
// group spanning every input is a scale per output row.
bool per_row(const engine::LinearDescription& linear) {
  return linear.gptq->groups == 1 && linear.gptq->group_size >= linear.in_features;
}

std::string attention_text(const engine::ModelConfig& config, std::size_t index) {
  const int window = config.sliding_windows.at(index);
  return window > 0 ? "window " + std::to_string(window) : std::string("global");
}

}  // namespace

Json linear_json(const engine::LinearDescription& linear) {
  Json entry{{"format", engine::to_string(linear.format)},
             {"bits_per_weight", linear.bits_per_weight},
             {"bytes", linear.device_bytes}};
  if (linear.format == engine::LinearFormat::Dense) {
    entry["dtype"] = std::string(kernels::dtype_name(linear.dtype));
  }
  if (linear.exl3) {
    entry["trellis_bits"] = linear.exl3->bits;
    entry["codebook"] = engine::formats::exl3_codebook_name(linear.exl3->codebook);
  }
  if (linear.gptq) {
    entry["bits"] = linear.gptq->bits;
    entry["group_size"] = per_row(linear) ? Json(nullptr) : Json(linear.gptq->group_size);
    entry["zero_points"] = !linear.gptq->symmetric;
    entry["act_order"] = !linear.gptq->g_idx.empty();
  }
  if (linear.has_bias) entry["bias"] = true;
  return entry;
}

std::string linear_text(const engine::LinearDescription& linear) {
  std::ostringstream text;
  text.precision(3);
  if (linear.format == engine::LinearFormat::Dense) {
    text << kernels::dtype_name(linear.dtype);
  } else if (linear.exl3) {
    // The code's own width (what exllamav3 calls a tensor's bits) and what
    // it stores with its scales and padding.
    text << "exl3 " << linear.exl3->bits << "-bit ("
         << engine::formats::exl3_codebook_name(linear.exl3->codebook) << ", "
         << linear.bits_per_weight << " bpw)";
  } else if (linear.gptq) {
    // "awq 4-bit g128 4.25 bpw": the values' width and group size beside
    // what they cost with their scales and zero points.
    text << engine::to_string(linear.format) << ' ' << linear.gptq->bits << "-bit ";
    if (per_row(linear)) {
      text << "per-row";
    } else {
      text << 'g' << linear.gptq->group_size;
    }
    text << ' ' << linear.bits_per_weight << " bpw";
  } else {
    text << engine::to_string(linear.format) << ' ' << linear.bits_per_weight << " bpw";
  }
  return text.str();
}

Json layer_json(const engine::ModelDescription& model, std::size_t index) {
  const engine::LayerDescription& layer = model.layers.at(index);
  const int window = model.config.sliding_windows.at(index);
  Json entry{{"index", index},
             {"bytes", layer.device_bytes()},
             {"attention", window > 0 ? Json{{"sliding_window", window}} : Json("global")}};
  for (const auto& [name, linear] : projections(layer))
    entry[name] = linear_json(*linear);
  if (layer.router) {
    Json experts = Json::array();
    for (const engine::ExpertDescription& expert : layer.experts) {
      experts.push_back({{"gate", linear_json(expert.gate)},
                         {"up", linear_json(expert.up)},
                         {"down", linear_json(expert.down)}});
    }
    entry["experts"] = experts;
    entry["active_bytes"] = layer.active_bytes(model.config.moe.experts_per_token);
  }
  return entry;
}

std::string layer_text(const engine::ModelDescription& model, std::size_t index) {
  const engine::LayerDescription& layer = model.layers.at(index);
  std::ostringstream text;
  text << attention_text(model.config, index);
  for (const auto& [name, linear] : projections(layer)) {
    std::string shown = name;
    if (shown.ends_with("_proj")) shown.resize(shown.size() - 5);
    text << ", " << shown << ' ' << linear_text(*linear);
  }
  if (layer.router) {
    const engine::ExpertDescription& first = layer.experts.front();
    text << ", " << layer.experts.size() << " experts (gate " << linear_text(first.gate) << ", up "
         << linear_text(first.up) << ", down " << linear_text(first.down) << "), a token reads "
         << human_bytes(layer.active_bytes(model.config.moe.experts_per_token));
  }
  text << " (" << human_bytes(layer.device_bytes()) << ")";
  return text.str();
}

Json weights_json(const engine::ModelDescription& model) {
  const engine::WeightsSummary summary = engine::summarize_weights(model);
  Json kinds = Json::object();
  for (const engine::WeightsSummary::Kind& kind : summary.kinds) {
    Json entry{{"parameters", kind.parameters}, {"bits_per_weight", kind.bits_per_weight}};
    if (kind.trellis_bits > 0) entry["trellis_bits"] = kind.trellis_bits;
    kinds[kind.name] = entry;
  }
  return Json{{"formats", summary.formats}, {"codebooks", summary.codebooks}, {"kinds", kinds}};
}

std::string experts_text(const engine::ModelConfig& config) {
  if (config.moe.experts == 0) return {};
  return std::to_string(config.moe.experts) + " experts, " +
         std::to_string(config.moe.experts_per_token) + " per token";
}

}  // namespace quire::cli
