#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "quire/engine/generator/random.h"

namespace quire::engine {

// How the next token is chosen from a row of logits. The defaults are
// exllamav2's. A filter whose value says "off" costs nothing.
struct SamplingSettings {
  float temperature = 0.8f;           // below 0.01: greedy (argmax)
  int top_k = 50;                     // 0: off
  float top_p = 0.8f;                 // 1: off
  float min_p = 0.0f;                 // 0: off
  float typical = 1.0f;               // 1: off
  float repetition_penalty = 1.025f;  // 1: off
  int penalty_range = 1024;  // tokens back that the penalties look at; 0: the whole context
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::map<std::int32_t, float> token_bias;  // added to the logit
  std::vector<std::int32_t> banned_tokens;
  // Without a seed each Sampler draws one from std::random_device.
  std::optional<std::uint64_t> seed;

  bool greedy() const { return temperature < 0.01f; }
  // Pure argmax: no penalties, no filters.
  static SamplingSettings greedy_settings();
};

// A token the last draw chose among, with its final (renormalized) probability.
struct SamplingCandidate {
  std::int32_t id = 0;
  float logit = 0;  // after penalties, bias and bans, before the temperature
  float probability = 0;
};

// Chooses tokens, exllamav2's order: penalties (repetition, frequency,
// presence) -> token bias -> banned tokens -> greedy argmax, or softmax with
// temperature -> top-k -> top-p -> min-p -> typical -> renormalize -> draw.
// Each filter renormalizes what it keeps, so a later one sees a distribution.
//
// Reproducible: the same seed, settings, logits and context give the same
// tokens on every machine. Ranking ties are broken by the lower id, and the
// draw walks the candidates in a fixed order. (Only a libm whose expf rounds
// differently could move a draw that falls exactly on a boundary.)
//
// The scratch vectors are reused across calls, so sampling allocates only
// while the vocabulary grows. Not thread-safe; one sampler per job.
class Sampler {
 public:
  // Throws std::invalid_argument for a setting outside its range, naming it.
  explicit Sampler(const SamplingSettings& settings);

  // `context` is the prompt and what has been generated so far; the penalties
  // look at its last penalty_range tokens. Ids in the context, the bias or the
  // bans that lie outside the logits are ignored (settings may outlive a
  // model). Throws std::invalid_argument, and draws nothing, when no token is
  // left to choose (empty logits, every token banned or -inf) or when a token
  // that is not banned has a NaN logit: both mean the request or the model's
  // output is broken, and inventing a token would hide that.
  std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> context);

  const SamplingSettings& settings() const { return settings_; }
  // The logits of the last call after penalties, bias and bans.
  std::span<const float> last_logits() const { return logits_; }
  // The tokens the last call drew from, in ranking order (ids ascending when
  // no filter ranked them), probabilities summing to 1. Greedy: the one token.
  std::span<const SamplingCandidate> last_candidates() const { return candidates_; }

 private:
  void apply_penalties(std::span<const std::int32_t> context);
  std::int32_t draw();

  SamplingSettings settings_;
  Random random_;
  std::vector<float> logits_;
  std::vector<SamplingCandidate> candidates_;
  std::vector<std::int32_t> counts_;   // per token in the penalty window; zero between calls
  std::vector<std::int32_t> touched_;  // the tokens whose count is not zero
  std::vector<float> scores_;          // typical sampling's, by token id
};

}  // namespace quire::engine
