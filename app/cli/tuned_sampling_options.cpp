#include "tuned_sampling_options.h"

#include <CLI/CLI.hpp>

namespace quire::cli {

void TunedSamplingOptions::add_to(CLI::App& command) {
  command
      .add_option("--dry-multiplier", dry_multiplier,
                  "DRY: how hard a repeated sequence is penalized (default 0: off)")
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--dry-base", dry_base,
                  "DRY: how fast the penalty grows with the repeat's length (default 1.75)")
      ->check(CLI::Range(1.0, 1e6));
  command
      .add_option("--dry-allowed-length", dry_allowed_length,
                  "DRY: the longest repeat left unpenalized (default 2)")
      ->check(CLI::Range(1, 1 << 30));
  command
      .add_option("--dry-range", dry_range,
                  "DRY: tokens back to look for repeats (default 0: the whole context)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--dry-sequence-breaker", dry_sequence_breakers,
                     "DRY: text that ends a repeat (repeatable; replaces the defaults \\n : \" *; "
                     "\"none\" for no breakers)");
  command
      .add_option("--xtc-threshold", xtc_threshold,
                  "XTC: tokens at least this likely may be excluded (default 0.1; above 0.5: off)")
      ->check(CLI::Range(0.0, 1.0));
  command
      .add_option("--xtc-probability", xtc_probability,
                  "XTC: how often the top choices are excluded (default 0: off)")
      ->check(CLI::Range(0.0, 1.0));
  command.add_option("--top-n-sigma", top_n_sigma,
                     "Keep tokens within n standard deviations of the best logit (default 0: off)");
  command
      .add_option("--mirostat", mirostat,
                  "Mirostat version: 0 off, 2 for mirostat v2 (replaces top-k, top-p, min-p, "
                  "typical, top-n-sigma and XTC)")
      ->check(CLI::IsMember({0, 2}));
  command
      .add_option("--mirostat-tau", mirostat_tau, "Mirostat: target surprise in bits (default 5)")
      ->check(CLI::PositiveNumber);
  command.add_option("--mirostat-eta", mirostat_eta, "Mirostat: learning rate (default 0.1)")
      ->check(CLI::Range(1e-9, 1.0));
}

void TunedSamplingOptions::apply(engine::SamplingSettings& settings) const {
  if (dry_multiplier) settings.dry_multiplier = static_cast<float>(*dry_multiplier);
  if (dry_base) settings.dry_base = static_cast<float>(*dry_base);
  if (dry_allowed_length) settings.dry_allowed_length = *dry_allowed_length;
  if (dry_range) settings.dry_range = *dry_range;
  if (!dry_sequence_breakers.empty()) {
    settings.dry_sequence_breakers.clear();
    if (!(dry_sequence_breakers.size() == 1 && dry_sequence_breakers.front() == "none")) {
      for (const std::string& breaker : dry_sequence_breakers)
        settings.dry_sequence_breakers.push_back(decode_escapes(breaker));
    }
  }
  if (xtc_threshold) settings.xtc_threshold = static_cast<float>(*xtc_threshold);
  if (xtc_probability) settings.xtc_probability = static_cast<float>(*xtc_probability);
  if (top_n_sigma) settings.top_n_sigma = static_cast<float>(*top_n_sigma);
  if (mirostat) settings.mirostat = *mirostat;
  if (mirostat_tau) settings.mirostat_tau = static_cast<float>(*mirostat_tau);
  if (mirostat_eta) settings.mirostat_eta = static_cast<float>(*mirostat_eta);
}

std::string decode_escapes(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[i + 1];
    switch (next) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case '"':
        out += '"';
        break;
      case '\'':
        out += '\'';
        break;
      case '\\':
        out += '\\';
        break;
      default:
        out += text.substr(i, 2);
        break;
    }
    ++i;
  }
  return out;
}

}  // namespace quire::cli
