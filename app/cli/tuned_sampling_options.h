#pragma once

#include <optional>
#include <string>
#include <vector>

#include "quire/engine/generator/sampler.h"

namespace CLI {
class App;
}

namespace quire::cli {

// DRY, XTC, top-nσ and mirostat v2 on the command line, spelled as
// llama.cpp's CLI spells them. Unset options keep the engine's defaults (all
// four off).
struct TunedSamplingOptions {
  std::optional<double> dry_multiplier, dry_base;
  std::optional<int> dry_allowed_length, dry_range;
  // Replace the default breakers when given; "none" alone means no breakers.
  // Backslash escapes (\n, \t, \", \', \\) are decoded.
  std::vector<std::string> dry_sequence_breakers;
  std::optional<double> xtc_threshold, xtc_probability;
  std::optional<double> top_n_sigma;
  std::optional<int> mirostat;
  std::optional<double> mirostat_tau, mirostat_eta;

  void add_to(CLI::App& command);
  // Writes the options that were given into `settings`.
  void apply(engine::SamplingSettings& settings) const;
};

// "\\n" -> "\n" and the other escapes above; an unknown escape is kept as written.
std::string decode_escapes(const std::string& text);

}  // namespace quire::cli
