// The request fields of the samplers people tune, under the names clients
// already send: llama.cpp's server (dry_multiplier, dry_base,
// dry_allowed_length, dry_penalty_last_n, dry_sequence_breakers,
// xtc_threshold, xtc_probability, top_n_sigma, mirostat, mirostat_tau,
// mirostat_eta) and TabbyAPI's (dry_range, nsigma, mirostat_mode).
// dry_penalty_last_n keeps llama.cpp's meaning (-1: the whole context, 0: DRY
// off, n: the last n tokens); dry_range keeps TabbyAPI's (0: the whole
// context).

#include "tuned_sampling_fields.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace quire::server {
namespace {

using nlohmann::json;
using request::fail;
using request::Fields;
using request::kind_of;

constexpr std::int64_t kMostTokens = std::numeric_limits<std::int32_t>::max();
// Bounds past any setting that does something useful, so that a typo gets a
// clear refusal instead of a reply made of one token.
constexpr double kMostPenalty = 100;
// More breakers than any model's punctuation needs; each is matched against
// the whole vocabulary when a job starts.
constexpr std::size_t kMaxBreakers = 64;
constexpr std::size_t kMaxBreakerBytes = 64;

// The field under either of two names; both at once is refused.
const char* either(const Fields& fields, const char* first, const char* second) {
  const bool has_first = fields.find(first) != nullptr;
  if (has_first && fields.find(second) != nullptr) {
    fail(std::string(first) + " and " + std::string(second) +
             " are two names for one setting; send one of them.",
         first);
  }
  return has_first ? first : second;
}

std::optional<std::vector<std::string>> parse_breakers(const Fields& fields) {
  const json* list = fields.find("dry_sequence_breakers");
  if (!list) return std::nullopt;
  if (!list->is_array()) {
    fail("dry_sequence_breakers must be an array of strings, not " + std::string(kind_of(*list)) +
             ".",
         "dry_sequence_breakers");
  }
  if (list->size() > kMaxBreakers) {
    fail("dry_sequence_breakers may hold at most " + std::to_string(kMaxBreakers) +
             " strings; it holds " + std::to_string(list->size()) + ".",
         "dry_sequence_breakers");
  }
  std::vector<std::string> breakers;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    const std::string where = "dry_sequence_breakers[" + std::to_string(i) + "]";
    if (!item.is_string()) {
      fail(where + " must be a string, not " + std::string(kind_of(item)) + ".",
           "dry_sequence_breakers");
    }
    const std::string text = item.get<std::string>();
    if (text.empty() || text.size() > kMaxBreakerBytes) {
      fail(where + " must hold 1 to " + std::to_string(kMaxBreakerBytes) + " bytes.",
           "dry_sequence_breakers");
    }
    breakers.push_back(text);
  }
  return breakers;
}

}  // namespace

void parse_tuned_sampling(const Fields& fields, SamplingFields& sampling) {
  sampling.dry_multiplier = fields.number("dry_multiplier", 0, kMostPenalty);
  sampling.dry_base = fields.number("dry_base", 1, kMostPenalty);
  sampling.dry_allowed_length = fields.integer("dry_allowed_length", 1, kMostTokens);
  if (either(fields, "dry_range", "dry_penalty_last_n") == std::string("dry_range")) {
    sampling.dry_range = fields.integer("dry_range", 0, kMostTokens);
  } else if (const auto last_n = fields.integer("dry_penalty_last_n", -1, kMostTokens)) {
    if (*last_n == 0) {
      sampling.dry_multiplier = 0.0;  // llama.cpp: 0 turns DRY off
    } else {
      sampling.dry_range = *last_n < 0 ? 0 : *last_n;
    }
  }
  sampling.dry_sequence_breakers = parse_breakers(fields);
  sampling.xtc_threshold = fields.number("xtc_threshold", 0, 1);
  sampling.xtc_probability = fields.number("xtc_probability", 0, 1);
  sampling.top_n_sigma = fields.number(either(fields, "top_n_sigma", "nsigma"), -100, 100);
  const char* mirostat = either(fields, "mirostat", "mirostat_mode");
  if (const json* mode = fields.find(mirostat)) {
    sampling.mirostat = Fields::integer_value(*mode, mirostat, 0, 2, mirostat);
    if (*sampling.mirostat == 1) {
      fail(std::string(mirostat) +
               " 1 (the first mirostat) is not supported; use 2 for mirostat v2, or 0.",
           mirostat);
    }
  }
  sampling.mirostat_tau = fields.number("mirostat_tau", 0.01, 100);
  sampling.mirostat_eta = fields.number("mirostat_eta", 0.001, 1);
}

}  // namespace quire::server
