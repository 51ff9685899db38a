#include "quire/engine/generator/sampler.h"

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

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
    : settings_(validated(settings)), random_(seed_of(settings)) {}

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> context,
                             TokenMask allowed) {
  adjust_logits(logits, context, allowed);
  if (settings_.greedy()) {
    const std::size_t best = detail::argmax(logits_);
    candidates_.assign(1, {static_cast<std::int32_t>(best), logits_[best], 1.0f});
    return candidates_.front().id;
  }

  detail::collect_candidates(logits_, candidates_);
  bool ranked = false;
  if (settings_.top_k > 0) ranked = detail::keep_top_k(candidates_, settings_.top_k);
  // One number per call, whatever the filters leave, so a seeded stream does
  // not shift when a step happens to leave a single candidate.
  return filter_and_draw(ranked, random_.uniform(), logits_.size());
}

void Sampler::adjust_logits(std::span<const float> logits, std::span<const std::int32_t> context,
                            TokenMask allowed) {
  logits_.assign(logits.begin(), logits.end());
  const std::size_t size = logits_.size();
  if (penalties_on()) apply_penalties(context);
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

void Sampler::filter(bool ranked, std::size_t vocab) {
  detail::apply_softmax(candidates_, settings_.temperature);
  if (settings_.top_p > 0 && settings_.top_p < 1) {
    ranked = detail::keep_top_p(candidates_, settings_.top_p, ranked);
  }
  if (settings_.min_p > 0) detail::keep_min_p(candidates_, settings_.min_p);
  if (settings_.typical > 0 && settings_.typical < 1) {
    if (scores_.size() < vocab) scores_.resize(vocab);
    detail::keep_typical(candidates_, settings_.typical, scores_);
  }
}

std::int32_t Sampler::filter_and_draw(bool ranked, double u, std::size_t vocab) {
  filter(ranked, vocab);
  return candidates_[detail::draw_index(candidates_, u)].id;
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
