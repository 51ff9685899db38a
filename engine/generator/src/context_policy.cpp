#include "quire/engine/generator/context_policy.h"

#include <algorithm>
#include <stdexcept>

#include "quire/engine/generator/conversation.h"

namespace quire::engine {
namespace {

// "1840" as "1,840": the messages name sizes people compare at a glance.
std::string grouped(std::int64_t count) {
  std::string digits = std::to_string(count < 0 ? -count : count);
  for (auto at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return count < 0 ? "-" + digits : digits;
}

void check_shape(const ContextShape& shape) {
  if (shape.turns.empty()) {
    throw std::invalid_argument("a context plan needs at least the newest turn");
  }
  if (!shape.turns_as_first.empty() && shape.turns_as_first.size() != shape.turns.size()) {
    throw std::invalid_argument("turns_as_first needs one size per turn, or none");
  }
  auto negative = [](std::int64_t n) { return n < 0; };
  if (shape.preamble < 0 || shape.reserve < 0 || shape.incoming < 0 ||
      std::ranges::any_of(shape.turns, negative) ||
      std::ranges::any_of(shape.turns_as_first, negative)) {
    throw std::invalid_argument("token counts in a context plan cannot be negative");
  }
  if (shape.page_tokens <= 0 || shape.room() <= 0) {
    throw std::invalid_argument(
        "a context plan needs a positive page size and a context larger than the reply's "
        "reserve and the new message");
  }
}

std::int64_t as_first(const ContextShape& shape, std::size_t turn) {
  return shape.turns_as_first.empty() ? shape.turns[turn] : shape.turns_as_first[turn];
}

// The prompt without turns [first, first + count): the first kept turn is
// rendered as the first one when the turns before it all went.
std::int64_t size_without(const ContextShape& shape, std::size_t first, std::size_t count) {
  std::int64_t total = shape.preamble;
  for (std::size_t t = 0; t < shape.turns.size(); ++t) {
    if (t >= first && t < first + count) continue;
    const bool becomes_first = t == first + count && first == 0;
    total += becomes_first ? as_first(shape, t) : shape.turns[t];
  }
  return total;
}

// "248 kept for the reply" and, with a message not among the turns yet,
// "and about 40 for the new message".
std::string kept_beside(const ContextShape& shape) {
  std::string kept = grouped(shape.reserve) + " kept for the reply";
  if (shape.incoming > 0) kept += " and about " + grouped(shape.incoming) + " for the new message";
  return kept;
}

[[noreturn]] void pinned_too_long(const ContextShape& shape, std::int64_t pinned,
                                  std::int64_t newest) {
  throw ContextOverflow(
      "the newest turn alone does not fit: it takes " + grouped(newest) +
          " tokens and the system prompt " + grouped(shape.preamble) + ", " + grouped(pinned) +
          " together; with " + kept_beside(shape) + " that exceeds the context of " +
          grouped(shape.context) + " tokens, which leaves " + grouped(shape.room()) +
          " for them. Shorten the message or the system prompt, or allow a longer context",
      pinned + shape.reserve + shape.incoming, shape.context);
}

}  // namespace

ContextPlan plan_context(ContextPolicy policy, const ContextShape& shape) {
  check_shape(shape);
  const std::size_t turns = shape.turns.size();
  const std::size_t newest = turns - 1;
  const std::int64_t room = shape.room();

  ContextPlan plan;
  plan.tokens_before = size_without(shape, 0, 0);
  plan.tokens_after = plan.tokens_before;
  plan.kept_prefix = plan.tokens_before;
  plan.reused_tokens = plan.tokens_before;
  if (plan.tokens_before <= room) return plan;
  plan.over_by = plan.tokens_before - room;
  if (policy == ContextPolicy::Stop) {
    plan.outcome = ContextPlan::Outcome::Stopped;
    return plan;
  }

  // What stays whatever else goes: the preamble and the newest turn, rendered
  // as the first turn when everything before it goes.
  const std::int64_t pinned = shape.preamble + as_first(shape, newest);
  if (turns == 1 || pinned > room) pinned_too_long(shape, pinned, as_first(shape, newest));

  // Truncate-middle keeps the first turn while it fits beside the newest.
  const bool keep_first = policy == ContextPolicy::TruncateMiddle && turns >= 3 &&
                          shape.preamble + shape.turns[0] + shape.turns[newest] <= room;
  const std::size_t first = keep_first ? 1 : 0;
  const std::int64_t target = room / 2;
  std::size_t count = 0;
  std::int64_t after = plan.tokens_before;
  while (first + count < newest) {
    ++count;
    after = size_without(shape, first, count);
    if (after <= target) break;
  }
  // With every unpinned turn gone the prompt fits: the pinned ones fit the
  // room by the checks above.
  plan.outcome = ContextPlan::Outcome::Dropped;
  plan.first_dropped = static_cast<int>(first);
  plan.dropped_turns = static_cast<int>(count);
  plan.tokens_after = after;
  plan.kept_prefix = shape.preamble + (keep_first ? shape.turns[0] : 0);
  plan.reused_tokens = plan.kept_prefix / shape.page_tokens * shape.page_tokens;
  plan.recomputed_tokens = plan.tokens_after - plan.reused_tokens;
  return plan;
}

PromptCut cut_prompt(ContextPolicy policy, std::int64_t prompt_tokens, std::int64_t pinned,
                     std::int64_t context, std::int64_t reserve, std::int64_t page_tokens) {
  const std::int64_t room = context - reserve;
  if (pinned < 0 || prompt_tokens < pinned || page_tokens <= 0 || room <= pinned) {
    throw std::invalid_argument("a context of " + grouped(context) + " tokens with " +
                                grouped(reserve) + " kept for the reply leaves no room for a " +
                                "prompt; allow a longer context or fewer new tokens");
  }
  PromptCut cut;
  if (prompt_tokens <= room) return cut;
  cut.over_by = prompt_tokens - room;
  if (policy == ContextPolicy::Stop) {
    throw ContextOverflow(
        "the prompt takes " + grouped(prompt_tokens) + " tokens with " + grouped(reserve) +
            " kept for the reply: " + grouped(cut.over_by) + " tokens over the context of " +
            grouped(context) +
            ", and the context policy is to stop. Shorten the prompt, allow a longer context or "
            "fewer new tokens, or choose drop-oldest or truncate-middle",
        prompt_tokens + reserve, context);
  }
  const std::int64_t head =
      policy == ContextPolicy::TruncateMiddle ? pinned + (room - pinned) / 2 : pinned;
  cut.drop_begin = head;
  cut.drop_end = head + cut.over_by;
  cut.recomputed_tokens = room - head / page_tokens * page_tokens;
  return cut;
}

std::string describe(const ContextPlan& plan) {
  switch (plan.outcome) {
    case ContextPlan::Outcome::Fits:
      return {};
    case ContextPlan::Outcome::Stopped:
      return "the chat is " + grouped(plan.over_by) + " tokens over the context";
    case ContextPlan::Outcome::Dropped:
      break;
  }
  const std::string turns = plan.dropped_turns == 1
                                ? "turn " + std::to_string(plan.first_dropped_turn())
                                : "turns " + std::to_string(plan.first_dropped_turn()) + "\u2013" +
                                      std::to_string(plan.last_dropped_turn());
  return turns + " left the context (" + grouped(plan.dropped_tokens()) + " tokens); " +
         grouped(plan.recomputed_tokens) + " tokens read again";
}

std::string stopped_message(const ContextPlan& plan, const ContextShape& shape) {
  return "The chat takes " + grouped(plan.tokens_before) + " tokens; with " + kept_beside(shape) +
         " that is " + grouped(plan.over_by) + " tokens over the context of " +
         grouped(shape.context) +
         ", and the chat's context policy is to stop. Shorten the message, allow a longer "
         "context, or choose another policy (drop the oldest turns, or truncate the middle)";
}

}  // namespace quire::engine
