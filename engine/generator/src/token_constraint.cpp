#include "quire/engine/generator/token_constraint.h"

#include <algorithm>
#include <stdexcept>

namespace quire::engine {
namespace {

void set_bit(std::span<std::uint32_t> mask, std::int32_t id, bool on) {
  const auto word = static_cast<std::size_t>(id) / 32;
  if (id < 0 || word >= mask.size()) return;
  const std::uint32_t bit = 1u << (id % 32);
  mask[word] = on ? (mask[word] | bit) : (mask[word] & ~bit);
}

}  // namespace

TokenConstraint::TokenConstraint(std::shared_ptr<const grammar::Grammar> grammar,
                                 std::shared_ptr<const grammar::TokenVocabulary> vocabulary,
                                 std::vector<std::int32_t> end_tokens,
                                 std::vector<grammar::GrammarTrigger> triggers)
    : state_(triggers.empty() ? State::Active : State::Dormant),
      triggers_(std::move(triggers)),
      matcher_(std::move(grammar), vocabulary),
      end_tokens_(std::move(end_tokens)),
      vocabulary_eos_(vocabulary->eos()),
      mask_(matcher_.mask_words()) {}

bool TokenConstraint::is_end_token(std::int32_t token) const {
  return std::find(end_tokens_.begin(), end_tokens_.end(), token) != end_tokens_.end();
}

void TokenConstraint::compute() {
  if (fresh_) return;
  matcher_.allowed_tokens(mask_);
  // The matcher allows the vocabulary's end-of-sequence ids where the text
  // may end; this job ends on its own end tokens instead, which are often
  // control tokens with no bytes that the matcher knows nothing of.
  // A stop token that spells text the grammar takes still ends the job, so
  // it too waits for a complete text.
  for (const std::int32_t id : vocabulary_eos_)
    set_bit(mask_, id, false);
  for (const std::int32_t id : end_tokens_)
    set_bit(mask_, id, false);
  content_allowed_ =
      std::any_of(mask_.begin(), mask_.end(), [](std::uint32_t word) { return word != 0; });
  if (matcher_.is_accepting()) {
    for (const std::int32_t id : end_tokens_)
      set_bit(mask_, id, true);
  }
  fresh_ = true;
}

std::span<const std::uint32_t> TokenConstraint::mask() {
  if (state_ != State::Active) return {};
  compute();
  if (!content_allowed_ && !matcher_.is_accepting()) {
    throw std::invalid_argument(
        "the response format's grammar allows no token here; the reply so far cannot be "
        "completed with this model's vocabulary");
  }
  if (!content_allowed_ && end_tokens_.empty()) {
    throw std::invalid_argument(
        "the response format's grammar is complete, and this reply has no token to end with");
  }
  return mask_;
}

void TokenConstraint::prepare() noexcept {
  if (state_ != State::Active) return;
  try {
    compute();
  } catch (...) {
    // mask() computes again and reports it on the generator's thread.
    fresh_ = false;
  }
}

bool TokenConstraint::complete() {
  if (state_ != State::Active) return false;
  compute();
  return matcher_.is_accepting() && !content_allowed_;
}

bool TokenConstraint::accept(std::int32_t token) {
  if (state_ != State::Active) return true;
  if (is_end_token(token)) return matcher_.is_accepting();
  if (!matcher_.accept(token)) return false;
  fresh_ = false;
  return true;
}

void TokenConstraint::observe_text(std::string_view piece) {
  if (state_ != State::Dormant || piece.empty()) return;
  const std::size_t before = seen_.size();
  seen_ += piece;
  std::size_t start = std::string::npos;
  for (const grammar::GrammarTrigger& trigger : triggers_) {
    std::size_t at = std::string::npos;
    if (trigger.at_start) {
      const std::size_t first = seen_.find_first_not_of(" \t\r\n");
      if (first != std::string::npos &&
          seen_.compare(first, trigger.text.size(), trigger.text) == 0)
        at = first;
    } else {
      // Only where the new piece could complete it.
      const std::size_t from = before >= trigger.text.size() ? before - trigger.text.size() + 1 : 0;
      at = seen_.find(trigger.text, from);
    }
    start = std::min(start, at);
  }
  if (start == std::string::npos) {
    const std::size_t first = seen_.find_first_not_of(" \t\r\n");
    // A start-only trigger that did not come first can come no more.
    if (first != std::string::npos &&
        std::all_of(triggers_.begin(), triggers_.end(),
                    [](const grammar::GrammarTrigger& trigger) { return trigger.at_start; })) {
      const bool may_still =
          std::any_of(triggers_.begin(), triggers_.end(), [&](const grammar::GrammarTrigger& t) {
            return std::string_view(t.text).starts_with(std::string_view(seen_).substr(first));
          });
      if (!may_still) state_ = State::Abandoned;
    }
    return;
  }
  if (matcher_.accept_bytes(std::string_view(seen_).substr(start))) {
    state_ = State::Active;
    fresh_ = false;
  } else {
    state_ = State::Abandoned;
  }
  seen_.clear();
}

}  // namespace quire::engine
