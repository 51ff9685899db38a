#include "quire/engine/runtime/weights_summary.h"

#include <map>
#include <set>
#include <sstream>

namespace quire::engine {
namespace {

// The running totals of one kind of tensor.
struct Totals {
  double parameters = 0.0;
  double stored_bits = 0.0;   // bits_per_weight * parameters
  double trellis_bits = 0.0;  // EXL3: the code's bits * parameters
  double trellis_parameters = 0.0;

  void add(const LinearDescription& linear) {
    const double count = double(linear.in_features) * double(linear.out_features);
    parameters += count;
    stored_bits += linear.bits_per_weight * count;
    if (linear.exl3) {
      trellis_bits += linear.exl3->bits * count;
      trellis_parameters += count;
    }
  }
};

// Kinds in the order they are shown.
const char* const kKinds[] = {"attention", "MLP", "experts", "router", "head"};

// Formats as people write them: "EXL3", "GPTQ", "AWQ", "BF16"; compressed-
// tensors' integer formats by their own lower-case names ("pack-quantized").
std::string display_name(std::string text) {
  if (text.find('-') != std::string::npos) return text;
  for (char& c : text)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return text;
}

}  // namespace

WeightsSummary summarize_weights(const ModelDescription& model) {
  std::map<std::string, Totals> kinds;
  std::set<std::string> formats;
  std::set<std::string> codebooks;
  Totals all;
  const auto add = [&](const char* kind, const LinearDescription& linear) {
    kinds[kind].add(linear);
    all.add(linear);
    if (linear.format == LinearFormat::Dense) {
      formats.insert(std::string(kernels::dtype_name(linear.dtype)));
    } else {
      formats.insert(to_string(linear.format));
    }
    if (linear.exl3) codebooks.insert(formats::exl3_codebook_name(linear.exl3->codebook));
  };
  for (const LayerDescription& layer : model.layers) {
    for (const auto* attention : {&layer.q, &layer.k, &layer.v, &layer.o})
      if (!attention->key.empty()) add("attention", *attention);
    if (layer.qkv) add("attention", *layer.qkv);
    for (const auto* mlp : {&layer.gate, &layer.up, &layer.down})
      if (!mlp->key.empty()) add("MLP", *mlp);
    if (layer.gate_up) add("MLP", *layer.gate_up);
    if (layer.router) add("router", *layer.router);
    for (const ExpertDescription& expert : layer.experts)
      for (const auto* linear : {&expert.gate, &expert.up, &expert.down})
        add("experts", *linear);
  }
  if (!model.head_tied) add("head", model.head);

  WeightsSummary summary;
  summary.formats.assign(formats.begin(), formats.end());
  summary.codebooks.assign(codebooks.begin(), codebooks.end());
  for (const char* name : kKinds) {
    const auto found = kinds.find(name);
    if (found == kinds.end()) continue;
    const Totals& totals = found->second;
    WeightsSummary::Kind kind;
    kind.name = name;
    kind.parameters = totals.parameters;
    kind.bits_per_weight = totals.stored_bits / totals.parameters;
    if (totals.trellis_parameters > 0) {
      kind.trellis_bits = totals.trellis_bits / totals.trellis_parameters;
    }
    summary.kinds.push_back(kind);
  }
  summary.bits_per_weight = all.parameters > 0 ? all.stored_bits / all.parameters : 0.0;
  summary.trellis = all.trellis_parameters > 0;
  return summary;
}

std::string WeightsSummary::text() const {
  std::ostringstream out;
  out.precision(3);
  for (std::size_t i = 0; i < formats.size(); ++i)
    out << (i == 0 ? "" : " and ") << display_name(formats[i]);
  if (!codebooks.empty()) {
    out << ", codebook";
    for (const std::string& codebook : codebooks)
      out << ' ' << codebook;
  }
  out << ':';
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    // What a user compares across models: the code's own bits where the
    // kind is trellis-coded throughout, the stored bits otherwise.
    const double bits =
        kinds[i].trellis_bits > 0 ? kinds[i].trellis_bits : kinds[i].bits_per_weight;
    out << (i == 0 ? " " : ", ") << kinds[i].name << ' ' << bits << " bits";
  }
  if (trellis)
    out << " (" << bits_per_weight << " bits per weight stored, with scales and padding)";
  return out.str();
}

}  // namespace quire::engine
