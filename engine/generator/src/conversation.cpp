#include "quire/engine/generator/conversation.h"

#include <algorithm>

namespace quire::engine {
namespace {

bool ends_with(std::span<const std::int32_t> ids, std::span<const std::int32_t> tail) {
  return !tail.empty() && ids.size() >= tail.size() &&
         std::equal(tail.begin(), tail.end(), ids.end() - static_cast<std::ptrdiff_t>(tail.size()));
}

bool contains(const std::vector<std::int32_t>& ids, std::int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::int64_t size_of(const Message& message) {
  return static_cast<std::int64_t>(message.tokens.size());
}

}  // namespace

std::string_view to_string(Role role) {
  switch (role) {
    case Role::System:
      return "system";
    case Role::User:
      return "user";
    case Role::Assistant:
      return "assistant";
    case Role::Tool:
      return "tool";
  }
  return "unknown";
}

Conversation::Conversation(ChatFormat format, const Tokenizer& tokenizer,
                           std::vector<Message> messages)
    : format_(std::move(format)),
      tokenizer_(&tokenizer),
      stops_(resolve_stops(format_, tokenizer)),
      messages_(std::move(messages)) {
  if (format_.is_template()) {
    tool_format_ = tools::detect_tool_call_format(format_.chat_template()->source().text);
  }
  open_ = !messages_.empty() && messages_.back().role == Role::User;
  rebuild_ids();
}

Conversation::Conversation(ChatFormat format, const Tokenizer& tokenizer, std::string system_prompt)
    : Conversation(std::move(format), tokenizer, std::vector<Message>{}) {
  // A template renders the system prompt with the first turn (templates
  // differ in where it goes, and some add a default of their own without one).
  std::vector<std::int32_t> preamble;
  if (!format_.is_template()) {
    preamble = render(builtin().preamble(system_prompt, tokenizer.adds_bos()), tokenizer);
  }
  messages_.push_back({Role::System, std::move(system_prompt), std::move(preamble)});
  rebuild_ids();
}

int Conversation::turn_count() const {
  return static_cast<int>(std::count_if(messages_.begin(), messages_.end(),
                                        [](const Message& m) { return m.role == Role::User; }));
}

std::vector<std::size_t> Conversation::user_indices() const {
  std::vector<std::size_t> users;
  for (std::size_t i = 0; i < messages_.size(); ++i) {
    if (messages_[i].role == Role::User) users.push_back(i);
  }
  return users;
}

std::vector<std::int32_t> Conversation::render_user(std::string_view text, bool first) const {
  return render(builtin().user_turn(text, system_prompt(), first), *tokenizer_);
}

std::vector<std::int32_t> Conversation::begin_turn(
    std::string_view user_message, std::vector<std::shared_ptr<const PreparedImage>> images) {
  if (!images.empty() && !format_.is_template()) {
    throw std::logic_error("images need the model's own chat template, which says where they go; " +
                           format_.title() + " is one of Quire's built-in formats");
  }
  if (awaiting_reply()) {
    throw std::logic_error("a new message cannot begin before the previous one has its reply");
  }
  if (const std::vector<tools::ToolCall> pending = pending_tool_calls(); !pending.empty()) {
    throw std::logic_error("tool call " + pending.front().id + " (" + pending.front().name +
                           ") of the last reply has no result yet; add_tool_result() for each "
                           "call first (a refused or failed call gets one too)");
  }
  if (format_.is_template()) {
    messages_.push_back({Role::User, std::string(user_message)});
    messages_.back().images = std::move(images);
    try {
      open_template_prompt();
    } catch (...) {
      messages_.pop_back();
      throw;
    }
    open_ = true;
    return ids_;
  }
  recomputed_ = 0;
  std::vector<std::int32_t> tokens = render_user(user_message, turn_count() == 0);
  ids_.insert(ids_.end(), tokens.begin(), tokens.end());
  messages_.push_back({Role::User, std::string(user_message), std::move(tokens)});
  open_ = true;
  return ids_;
}

void Conversation::end_turn(std::span<const std::int32_t> reply_tokens, bool closed_by_stop_token,
                            std::optional<std::string_view> reply_text,
                            std::vector<tools::ToolCall> tool_calls) {
  if (!awaiting_reply()) throw std::logic_error("no message awaits a reply");
  check_tool_calls(tool_calls);
  if (!tool_calls.empty() && !reply_text) {
    // Decoded, the calls' own markup would reach the template twice.
    throw std::invalid_argument(
        "a reply with tool calls needs its content text "
        "(tools::ParsedReply::content), which may be empty");
  }
  Message reply{Role::Assistant, {}, {reply_tokens.begin(), reply_tokens.end()}};
  reply.tool_calls = std::move(tool_calls);
  if (reply_text) {
    reply.text = *reply_text;
  } else {
    std::vector<std::int32_t> visible;
    for (const std::int32_t id : reply_tokens) {
      if (!contains(stops_.tokens, id)) visible.push_back(id);
    }
    reply.text = tokenizer_->decode(visible);
  }

  if (format_.is_template()) {
    // The template writes what closes the reply when the next turn renders;
    // the ids stand for the reply's text with its special tokens spelled out.
    rendered_ += tokenizer_->decode(reply.tokens, /*skip_special=*/false);
    ids_.insert(ids_.end(), reply.tokens.begin(), reply.tokens.end());
    messages_.push_back(std::move(reply));
    open_ = false;
    return;
  }
  const PromptSegments closing = builtin().closing();
  const std::vector<std::int32_t> closing_ids = render(closing, *tokenizer_);
  if (!ends_with(reply.tokens, closing_ids)) {
    const bool marker_first = !closing.empty() && closing.front().kind != PromptSegment::Kind::Text;
    if (closed_by_stop_token && marker_first && !reply.tokens.empty() &&
        contains(stops_.tokens, reply.tokens.back())) {
      // The stop token already closes the reply; add what follows the marker.
      const std::vector<std::int32_t> rest = render(std::span(closing).subspan(1), *tokenizer_);
      reply.tokens.insert(reply.tokens.end(), rest.begin(), rest.end());
    } else {
      reply.tokens.insert(reply.tokens.end(), closing_ids.begin(), closing_ids.end());
    }
  }
  ids_.insert(ids_.end(), reply.tokens.begin(), reply.tokens.end());
  messages_.push_back(std::move(reply));
  open_ = false;
}

std::size_t Conversation::turn_start(const std::vector<std::size_t>& users,
                                     std::size_t turn) const {
  return turn < users.size() ? users[turn] : messages_.size();
}

ContextShape Conversation::context_shape(std::int64_t max_tokens, std::int64_t reserve_for_reply,
                                         std::int64_t incoming) const {
  const std::vector<std::size_t> users = user_indices();
  ContextShape shape;
  shape.context = max_tokens;
  shape.reserve = reserve_for_reply;
  shape.incoming = incoming;
  // Anything before the first user message is the preamble's.
  for (std::size_t i = 0; i < turn_start(users, 0); ++i)
    shape.preamble += size_of(messages_[i]);
  const bool rerender = !format_.is_template() && builtin().system_in_first_message();
  for (std::size_t t = 0; t < users.size(); ++t) {
    std::int64_t size = 0;
    for (std::size_t i = users[t]; i < turn_start(users, t + 1); ++i)
      size += size_of(messages_[i]);
    shape.turns.push_back(size);
    if (rerender) {
      // The system prompt moves into whichever user message comes first.
      const auto first =
          static_cast<std::int64_t>(render_user(messages_[users[t]].text, true).size());
      shape.turns_as_first.push_back(size - size_of(messages_[users[t]]) + first);
    }
  }
  return shape;
}

std::optional<Trimmed> Conversation::fit(std::int64_t max_tokens, std::int64_t reserve_for_reply,
                                         ContextPolicy policy, std::int64_t incoming) {
  if (max_tokens <= 0 || reserve_for_reply < 0 || incoming < 0) {
    throw std::invalid_argument(
        "fit() needs a positive context, and a reply reserve and a new message of 0 or more");
  }
  const std::int64_t room = max_tokens - reserve_for_reply - incoming;
  const std::int64_t before = token_count();
  if (before <= room) return std::nullopt;
  if (turn_count() == 0 || room <= 0) {
    throw ContextOverflow("the system prompt takes " + std::to_string(before) + " tokens; with " +
                              std::to_string(reserve_for_reply + incoming) +
                              " kept for the new message and the reply that exceeds the "
                              "context of " +
                              std::to_string(max_tokens) +
                              " tokens. Shorten the system prompt, or allow a longer context",
                          before + reserve_for_reply + incoming, max_tokens);
  }
  const ContextShape shape = context_shape(max_tokens, reserve_for_reply, incoming);
  if (format_.is_template()) return fit_template(shape, policy, before);

  const ContextPlan plan = plan_context(policy, shape);
  if (plan.outcome == ContextPlan::Outcome::Stopped) {
    throw ContextOverflow(stopped_message(plan, shape), before + reserve_for_reply + incoming,
                          max_tokens);
  }

  const std::vector<std::size_t> users = user_indices();
  const auto first = static_cast<std::size_t>(plan.first_dropped);
  const std::size_t end = first + static_cast<std::size_t>(plan.dropped_turns);
  const std::vector<std::int32_t> old_ids = ids_;
  messages_.erase(messages_.begin() + static_cast<std::ptrdiff_t>(users[first]),
                  messages_.begin() + static_cast<std::ptrdiff_t>(users[end]));
  if (first == 0 && builtin().system_in_first_message()) {
    // The new first message carries the system prompt now.
    messages_[1].tokens = render_user(messages_[1].text, true);
  }
  rebuild_ids();
  const auto kept = std::mismatch(old_ids.begin(), old_ids.end(), ids_.begin(), ids_.end());
  recomputed_ = token_count() - (kept.second - ids_.begin());
  return Trimmed(plan.dropped_turns, before - token_count(), plan.first_dropped,
                 plan.recomputed_tokens);
}

std::string Conversation::text() const {
  if (format_.is_template()) return rendered_;
  return tokenizer_->decode(ids_, /*skip_special=*/false);
}

void Conversation::rebuild_ids() {
  ids_.clear();
  for (const Message& message : messages_)
    ids_.insert(ids_.end(), message.tokens.begin(), message.tokens.end());
}

}  // namespace quire::engine
