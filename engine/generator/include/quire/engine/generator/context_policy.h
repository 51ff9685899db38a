#pragma once

// What happens when a chat outgrows its context: the user's choice among
// stopping, dropping the oldest turns and truncating the middle, as one pure
// function on token counts. The conversation applies it (Conversation::fit),
// the app's context gauge asks it what the next turn would drop, and the
// server follows it per request, so all three agree on what goes.
//
// The rules, exactly:
// - A turn is a user message with everything that answers it (replies, tool
//   calls and their results); turns go whole, never in part.
// - Pinned (never dropped): the preamble (the system prompt) and the newest
//   turn. Truncate-middle also pins the first turn while the preamble, the
//   first turn and the newest turn fit the room together; otherwise the first
//   turn goes as the oldest would.
// - While the prompt fits the room (context minus the reply's reserve),
//   nothing happens. Otherwise, with a dropping policy, turns go in one step
//   (drop-oldest from the oldest on, truncate-middle from the oldest
//   unpinned turn on) until the prompt takes at most half the room, or only
//   pinned turns are left: fewer, larger drops, since each one makes the
//   cache recompute what follows the first changed token.
// - Stop drops nothing: the plan says how many tokens the prompt is over.
// - When the pinned turns alone exceed the room, planning throws
//   ContextOverflow naming the sizes.
//
// Recomputation follows the paged prefix cache: pages of `page_tokens` are
// hashed in a chain, so the first token that differs from the previous
// prompt invalidates its page and every later one. After a drop the prompt
// keeps its first `kept_prefix` tokens (the preamble, and for truncate-middle
// the first turn); the cache still serves their full pages and everything
// after the last of those pages is computed again.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace quire::engine {

enum class ContextPolicy { Stop, DropOldest, TruncateMiddle };

// "stop", "drop_oldest", "truncate_middle". Inline, as the server's request
// parser reads the names without linking the engine.
inline std::string_view to_string(ContextPolicy policy) {
  switch (policy) {
    case ContextPolicy::Stop:
      return "stop";
    case ContextPolicy::DropOldest:
      return "drop_oldest";
    case ContextPolicy::TruncateMiddle:
      return "truncate_middle";
  }
  return "drop_oldest";
}

// Takes the names above, with '-' for '_' ("drop-oldest"), and LM Studio's
// spellings "stopAtLimit", "rollingWindow" and "truncateMiddle"; nullopt for
// anything else.
inline std::optional<ContextPolicy> parse_context_policy(std::string_view text) {
  if (text == "stop" || text == "stopAtLimit") return ContextPolicy::Stop;
  if (text == "drop_oldest" || text == "drop-oldest" || text == "rollingWindow")
    return ContextPolicy::DropOldest;
  if (text == "truncate_middle" || text == "truncate-middle" || text == "truncateMiddle")
    return ContextPolicy::TruncateMiddle;
  return std::nullopt;
}

// The names parse_context_policy() takes, for messages.
inline constexpr std::string_view kContextPolicyChoices =
    "\"stop\", \"drop_oldest\" or \"truncate_middle\" (also \"drop-oldest\", "
    "\"truncate-middle\", and LM Studio's \"stopAtLimit\", \"rollingWindow\", "
    "\"truncateMiddle\")";

// The KV cache's page, in tokens (the design's 256-token pages).
inline constexpr std::int64_t kContextPageTokens = 256;

// A chat's prompt as token counts.
struct ContextShape {
  std::int64_t preamble = 0;  // the system prompt's tokens, pinned
  // Each turn's tokens, oldest first; the last is the newest, pinned.
  std::vector<std::int64_t> turns;
  // A turn's tokens when it becomes the first one kept: formats that write the
  // system prompt into the first user message render it again, larger. Empty
  // when they are the same as `turns`; else one per turn.
  std::vector<std::int64_t> turns_as_first;
  std::int64_t context = 0;  // tokens the prompt and the reply may take
  std::int64_t reserve = 0;  // kept for the reply
  // Tokens of the message about to be sent when it is not among `turns` yet
  // (an estimate before it is rendered); kept besides the reply.
  std::int64_t incoming = 0;
  std::int64_t page_tokens = kContextPageTokens;

  // What the turns may take: the context less the reply and the message.
  std::int64_t room() const { return context - reserve - incoming; }
};

struct ContextPlan {
  enum class Outcome {
    Fits,     // nothing to do
    Dropped,  // turns [first_dropped, first_dropped + dropped_turns) go
    Stopped,  // the Stop policy: the turn is not sent, `over_by` says by how much
  };
  Outcome outcome = Outcome::Fits;
  int first_dropped = 0;  // index into ContextShape::turns
  int dropped_turns = 0;
  std::int64_t tokens_before = 0;  // the prompt as it is
  std::int64_t tokens_after = 0;   // the prompt once the turns are gone
  std::int64_t over_by = 0;        // tokens the prompt exceeds the room by; 0 when it fits
  // Of the prompt after the drop: its first tokens identical to the prompt
  // before, and the part of them the cache serves (whole pages).
  std::int64_t kept_prefix = 0;
  std::int64_t reused_tokens = 0;
  // tokens_after - reused_tokens: what a drop makes the model read again.
  std::int64_t recomputed_tokens = 0;

  std::int64_t dropped_tokens() const { return tokens_before - tokens_after; }
  // The dropped turns numbered from 1, as the chat shows them.
  int first_dropped_turn() const { return first_dropped + 1; }
  int last_dropped_turn() const { return first_dropped + dropped_turns; }

  friend bool operator==(const ContextPlan&, const ContextPlan&) = default;
};

// Plans what `policy` does to a prompt of `shape`. Throws
// std::invalid_argument for a shape without turns, with negative sizes, a
// context that leaves no room or turns_as_first of the wrong length, and
// ContextOverflow (conversation.h) when even the pinned turns do not fit
// the room with a dropping policy.
ContextPlan plan_context(ContextPolicy policy, const ContextShape& shape);

// A prompt without turns (quire-cli generate's text): the same choice on
// tokens. Drop-oldest keeps the first `pinned` tokens (BOS) and the newest
// ones; truncate-middle keeps the first half of the room and the newest
// tokens for the rest; both drop exactly what does not fit, in one range.
struct PromptCut {
  std::int64_t drop_begin = 0;  // tokens [drop_begin, drop_end) go; equal: none
  std::int64_t drop_end = 0;
  std::int64_t over_by = 0;  // tokens the prompt exceeds the room by
  // Of what stays, the tokens the cache cannot serve from the uncut prompt.
  std::int64_t recomputed_tokens = 0;
};
// Throws ContextOverflow with Stop when the prompt does not fit (saying by
// how much), and std::invalid_argument for a context that leaves no room
// beyond the pinned tokens.
PromptCut cut_prompt(ContextPolicy policy, std::int64_t prompt_tokens, std::int64_t pinned,
                     std::int64_t context, std::int64_t reserve,
                     std::int64_t page_tokens = kContextPageTokens);

// One line for people: "turns 1–3 left the context (1,840 tokens);
// 2,304 tokens read again". Empty for Fits.
std::string describe(const ContextPlan& plan);

// Why a Stop plan refuses the turn and what the user can do.
std::string stopped_message(const ContextPlan& plan, const ContextShape& shape);

}  // namespace quire::engine
