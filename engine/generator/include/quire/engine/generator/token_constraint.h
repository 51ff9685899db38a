#pragma once

// One job's grammar (structured output) as the generator applies it: which
// tokens may be sampled next, whether the reply must end now, and the
// matcher's advance by each sampled token.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/grammar/token_matcher.h"

namespace quire::engine {

class TokenConstraint {
 public:
  // `end_tokens`: the ids that end this job (its stop tokens, and the
  // model's end-of-sequence ids when it stops there). They are allowed
  // exactly when the grammar's text is complete; the vocabulary's own
  // end-of-sequence ids only as far as they are among them.
  // With `triggers` the constraint is dormant (no mask, every token taken)
  // until observe_text() has seen one; see JobRequest::grammar_triggers.
  TokenConstraint(std::shared_ptr<const grammar::Grammar> grammar,
                  std::shared_ptr<const grammar::TokenVocabulary> vocabulary,
                  std::vector<std::int32_t> end_tokens,
                  std::vector<grammar::GrammarTrigger> triggers = {});

  // The tokens that may come next. Throws std::invalid_argument, naming the
  // grammar, when none may: a matcher never dead-ends, so that means a bug,
  // and the job ends with that error rather than drawing a token it forbids.
  std::span<const std::uint32_t> mask();
  // Whether the text is a whole text of the grammar and no token could add
  // to it: the reply ends here, as if at end-of-sequence.
  bool complete();
  // Advances by a sampled token. False, changing nothing, when the grammar
  // does not allow it here (an end token counts only once the text is complete).
  bool accept(std::int32_t token);

  // A dormant constraint reads the reply's text as it is decided (after each
  // accept()); at a trigger it takes over, from the trigger's first byte.
  // Text past the trigger that the grammar refuses (a token that spelled the
  // trigger and more) leaves the reply unconstrained for good, and the
  // reply's reader then finds it broken.
  void observe_text(std::string_view piece);
  // Works out the next mask now, so that mask() finds it ready; another
  // thread may call it while nothing else uses this constraint (the
  // generator does, while the model computes the step). A mask that cannot
  // be made is left for mask() to report.
  void prepare() noexcept;
  // Whether the grammar constrains the reply now.
  bool active() const { return state_ == State::Active; }

 private:
  bool is_end_token(std::int32_t token) const;
  void compute();

  enum class State { Dormant, Active, Abandoned };
  State state_ = State::Active;
  std::vector<grammar::GrammarTrigger> triggers_;
  std::string seen_;  // a dormant constraint's reply text so far

  grammar::TokenMatcher matcher_;
  std::vector<std::int32_t> end_tokens_;
  std::vector<std::int32_t> vocabulary_eos_;
  std::vector<std::uint32_t> mask_;
  bool fresh_ = false;            // mask_ is this state's
  bool content_allowed_ = false;  // a token other than an end token is allowed
};

}  // namespace quire::engine
