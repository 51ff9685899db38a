#include "quire/engine/generator/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "sampling_filters.h"

namespace quire::engine {
namespace {

void require(bool condition, const char* setting, const std::string& rule) {
  if (!condition) {
    throw std::invalid_argument(std::string("sampling setting ") + setting + " " + rule);
  }
}

const SamplingSettings& validated(const SamplingSettings& s) {
  require(std::isfinite(s.temperature) && s.temperature >= 0, "temperature",
          "must be 0 or more (below 0.01 picks the likeliest token)");
  require(s.top_k >= 0, "top_k", "must be 0 (off) or more");
  require(s.top_p >= 0 && s.top_p <= 1, "top_p", "must lie between 0 and 1 (1: off)");
  require(s.min_p >= 0 && s.min_p <= 1, "min_p", "must lie between 0 (off) and 1");
  require(s.typical >= 0 && s.typical <= 1, "typical", "must lie between 0 and 1 (1: off)");
  require(std::isfinite(s.repetition_penalty) && s.repetition_penalty > 0, "repetition_penalty",
          "must be more than 0 (1: off)");
  require(s.penalty_range >= 0, "penalty_range", "must be 0 (the whole context) or more");
  require(std::isfinite(s.frequency_penalty), "frequency_penalty", "must be a finite number");
  require(std::isfinite(s.presence_penalty), "presence_penalty", "must be a finite number");
  require(std::isfinite(s.dry_multiplier) && s.dry_multiplier >= 0, "dry_multiplier",
          "must be 0 (off) or more");
  require(std::isfinite(s.dry_base) && s.dry_base >= 1, "dry_base", "must be 1 or more");
  require(s.dry_allowed_length >= 1, "dry_allowed_length", "must be 1 or more");
  require(s.dry_range >= 0, "dry_range", "must be 0 (the whole context) or more");
  for (const std::string& breaker : s.dry_sequence_breakers) {
    require(!breaker.empty(), "dry_sequence_breakers", "must not hold an empty string");
  }
  require(s.xtc_threshold >= 0 && s.xtc_threshold <= 1, "xtc_threshold",
          "must lie between 0 and 1 (above 0.5: off)");
  require(s.xtc_probability >= 0 && s.xtc_probability <= 1, "xtc_probability",
          "must lie between 0 (off) and 1");
  require(std::isfinite(s.top_n_sigma), "top_n_sigma", "must be a finite number (0 or less: off)");
  require(s.mirostat == 0 || s.mirostat == 2, "mirostat",
          "must be 0 (off) or 2 (mirostat v2; version 1 is not supported)");
  require(std::isfinite(s.mirostat_tau) && s.mirostat_tau > 0, "mirostat_tau",
          "must be more than 0");
  require(std::isfinite(s.mirostat_eta) && s.mirostat_eta > 0 && s.mirostat_eta <= 1,
          "mirostat_eta", "must be more than 0 and at most 1");
  for (const auto& [token, bias] : s.token_bias) {
    require(!std::isnan(bias), "token_bias",
            "must not be NaN (token " + std::to_string(token) + ")");
  }
  return s;
}

std::uint64_t seed_of(const SamplingSettings& settings) {
  if (settings.seed) return *settings.seed;
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

bool in_range(std::int32_t id, std::size_t size) {
  return id >= 0 && static_cast<std::size_t>(id) < size;
}

}  // namespace

SamplingSettings SamplingSettings::greedy_settings() {
  SamplingSettings settings;
  settings.temperature = 0;
  settings.top_k = 0;
  settings.top_p = 1;
  settings.repetition_penalty = 1;
  return settings;
}

Sampler::Sampler(const SamplingSettings& settings)
    : settings_(validated(settings)),
      random_(seed_of(settings)),
      mirostat_mu_(2.0 * static_cast<double>(settings.mirostat_tau)) {}

void Sampler::set_dry_breaker_tokens(std::vector<std::int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  dry_breakers_ = std::move(ids);
}

Sampler::DrawNumbers Sampler::draw_numbers(Random& random) const {
  DrawNumbers numbers;
  if (settings_.xtc_on()) numbers.xtc = random.uniform();
  numbers.draw = random.uniform();
  return numbers;
}

bool Sampler::cut_logits() {
  if (settings_.mirostat_on()) return false;
  if (settings_.top_n_sigma_on()) detail::keep_top_n_sigma(candidates_, settings_.top_n_sigma);
  if (settings_.top_k > 0) return detail::keep_top_k(candidates_, settings_.top_k);
  return false;
}

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> context,
                             TokenMask allowed) {
  adjust_logits(logits, context, allowed);
  if (settings_.greedy()) {
    const std::size_t best = detail::argmax(logits_);
    candidates_.assign(1, {static_cast<std::int32_t>(best), logits_[best], 1.0f});
    return candidates_.front().id;
  }

  detail::collect_candidates(logits_, candidates_);
  const bool ranked = cut_logits();
  // The same numbers per call, whatever the filters leave, so a seeded
  // stream does not shift when a step happens to leave a single candidate.
  return filter_and_draw(ranked, draw_numbers(random_), logits_.size());
}

void Sampler::adjust_logits(std::span<const float> logits, std::span<const std::int32_t> context,
                            TokenMask allowed) {
  logits_.assign(logits.begin(), logits.end());
  const std::size_t size = logits_.size();
  if (penalties_on()) apply_penalties(context);
  if (settings_.dry_on()) {
    compute_dry_penalties(context, size);
    for (const auto& [token, penalty] : dry_penalties_)
      logits_[static_cast<std::size_t>(token)] -= penalty;
  }
  for (const auto& [token, bias] : settings_.token_bias) {
    if (in_range(token, size)) logits_[static_cast<std::size_t>(token)] += bias;
  }
  for (const std::int32_t token : settings_.banned_tokens) {
    if (in_range(token, size)) {
      logits_[static_cast<std::size_t>(token)] = -std::numeric_limits<float>::infinity();
    }
  }
  if (!allowed.empty()) {
    for (std::size_t i = 0; i < size; ++i) {
      if (!mask_allows(allowed, static_cast<std::int32_t>(i))) {
        logits_[i] = -std::numeric_limits<float>::infinity();
      }
    }
  }
}

void Sampler::filter(bool ranked, std::size_t vocab, double xtc_number) {
  detail::apply_softmax(candidates_, settings_.temperature);
  if (settings_.mirostat_on()) {
    detail::keep_within_surprise(candidates_, mirostat_mu_);
    return;
  }
  if (settings_.top_p > 0 && settings_.top_p < 1) {
    ranked = detail::keep_top_p(candidates_, settings_.top_p, ranked);
  }
  if (settings_.min_p > 0) detail::keep_min_p(candidates_, settings_.min_p);
  if (settings_.typical > 0 && settings_.typical < 1) {
    if (scores_.size() < vocab) scores_.resize(vocab);
    detail::keep_typical(candidates_, settings_.typical, scores_);
  }
  if (settings_.xtc_on() && xtc_number < settings_.xtc_probability) {
    detail::exclude_top_choices(candidates_, settings_.xtc_threshold);
  }
}

std::int32_t Sampler::filter_and_draw(bool ranked, DrawNumbers numbers, std::size_t vocab) {
  filter(ranked, vocab, numbers.xtc);
  const std::int32_t token = candidates_[detail::draw_index(candidates_, numbers.draw)].id;
  update_mirostat(token);
  return token;
}

void Sampler::update_mirostat(std::int32_t id) {
  if (!settings_.mirostat_on()) return;
  for (const SamplingCandidate& candidate : candidates_) {
    if (candidate.id != id) continue;
    const double surprise = -std::log2(static_cast<double>(candidate.probability));
    mirostat_mu_ -= static_cast<double>(settings_.mirostat_eta) *
                    (surprise - static_cast<double>(settings_.mirostat_tau));
    return;
  }
}

bool Sampler::penalties_on() const {
  return settings_.repetition_penalty != 1 || settings_.frequency_penalty != 0 ||
         settings_.presence_penalty != 0;
}

void Sampler::count_context(std::span<const std::int32_t> context, std::size_t size) {
  if (counts_.size() < size) counts_.resize(size, 0);
  const auto range = static_cast<std::size_t>(settings_.penalty_range);
  const std::size_t begin = range > 0 && context.size() > range ? context.size() - range : 0;
  for (const std::int32_t token : context.subspan(begin)) {
    if (!in_range(token, size)) continue;
    if (counts_[static_cast<std::size_t>(token)]++ == 0) touched_.push_back(token);
  }
}

[[gnu::noinline]] float Sampler::penalized(float logit, std::int32_t count) const {
  const float penalty = settings_.repetition_penalty;
  // Dividing a negative logit would make the token likelier; exllamav2
  // (after the CTRL paper) multiplies those instead.
  logit = logit > 0 ? logit / penalty : logit * penalty;
  logit -= settings_.frequency_penalty * static_cast<float>(count);
  logit -= settings_.presence_penalty;
  return logit;
}

void Sampler::apply_penalties(std::span<const std::int32_t> context) {
  count_context(context, logits_.size());
  for (const std::int32_t token : touched_) {
    const auto index = static_cast<std::size_t>(token);
    logits_[index] = penalized(logits_[index], counts_[index]);
    counts_[index] = 0;
  }
  touched_.clear();
}

}  // namespace quire::engine
