#include "inspect_weights.h"

#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace quire::cli {
namespace {

using Json = nlohmann::ordered_json;

// The running totals of one kind of tensor.
struct Kind {
  double parameters = 0.0;
  double stored_bits = 0.0;   // bits_per_weight * parameters
  double trellis_bits = 0.0;  // EXL3: the code's bits * parameters
  double trellis_parameters = 0.0;

  void add(const engine::LinearDescription& linear) {
    const double count = double(linear.in_features) * double(linear.out_features);
    parameters += count;
    stored_bits += linear.bits_per_weight * count;
    if (linear.exl3) {
      trellis_bits += linear.exl3->bits * count;
      trellis_parameters += count;
    }
  }
  // What a user compares across models: the code's own bits where the kind
  // is trellis-coded, the stored bits otherwise.
  double shown_bits() const {
    return trellis_parameters == parameters && parameters > 0 ? trellis_bits / parameters
                                                              : stored_bits / parameters;
  }
};

// Kinds in the order they are shown.
const char* const kKinds[] = {"attention", "MLP", "experts", "router", "head"};

struct Summary {
  std::map<std::string, Kind> kinds;
  std::set<std::string> formats;
  std::set<std::string> codebooks;
  Kind all;

  void add(const char* kind, const engine::LinearDescription& linear) {
    kinds[kind].add(linear);
    all.add(linear);
    if (linear.format == engine::LinearFormat::Dense) {
      formats.insert(std::string(kernels::dtype_name(linear.dtype)));
    } else {
      formats.insert(engine::to_string(linear.format));
    }
    if (linear.exl3) codebooks.insert(engine::formats::exl3_codebook_name(linear.exl3->codebook));
  }
};

Summary summarize(const engine::ModelDescription& model) {
  Summary summary;
  for (const engine::LayerDescription& layer : model.layers) {
    for (const auto* attention : {&layer.q, &layer.k, &layer.v, &layer.o})
      if (!attention->key.empty()) summary.add("attention", *attention);
    if (layer.qkv) summary.add("attention", *layer.qkv);
    for (const auto* mlp : {&layer.gate, &layer.up, &layer.down})
      if (!mlp->key.empty()) summary.add("MLP", *mlp);
    if (layer.gate_up) summary.add("MLP", *layer.gate_up);
    if (layer.router) summary.add("router", *layer.router);
    for (const engine::ExpertDescription& expert : layer.experts)
      for (const auto* linear : {&expert.gate, &expert.up, &expert.down})
        summary.add("experts", *linear);
  }
  if (!model.head_tied) summary.add("head", model.head);
  return summary;
}

std::string upper(std::string text) {
  for (char& c : text)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return text;
}

}  // namespace

std::string weights_text(const engine::ModelDescription& model) {
  const Summary summary = summarize(model);
  std::ostringstream text;
  text.precision(3);
  bool first = true;
  for (const std::string& format : summary.formats) {
    text << (first ? "" : " and ") << upper(format);
    first = false;
  }
  if (!summary.codebooks.empty()) {
    text << ", codebook";
    for (const std::string& codebook : summary.codebooks)
      text << ' ' << codebook;
  }
  text << ':';
  first = true;
  for (const char* name : kKinds) {
    const auto found = summary.kinds.find(name);
    if (found == summary.kinds.end()) continue;
    text << (first ? " " : ", ") << name << ' ' << found->second.shown_bits() << " bits";
    first = false;
  }
  if (summary.all.trellis_parameters > 0) {
    text << " (" << summary.all.stored_bits / summary.all.parameters
         << " bits per weight stored, with scales and padding)";
  }
  return text.str();
}

Json weights_json(const engine::ModelDescription& model) {
  const Summary summary = summarize(model);
  Json kinds = Json::object();
  for (const char* name : kKinds) {
    const auto found = summary.kinds.find(name);
    if (found == summary.kinds.end()) continue;
    const Kind& kind = found->second;
    Json entry{{"parameters", kind.parameters},
               {"bits_per_weight", kind.stored_bits / kind.parameters}};
    if (kind.trellis_parameters > 0) {
      entry["trellis_bits"] = kind.trellis_bits / kind.trellis_parameters;
    }
    kinds[name] = entry;
  }
  return Json{
      {"formats", std::vector<std::string>(summary.formats.begin(), summary.formats.end())},
      {"codebooks", std::vector<std::string>(summary.codebooks.begin(), summary.codebooks.end())},
      {"kinds", kinds}};
}

}  // namespace quire::cli
