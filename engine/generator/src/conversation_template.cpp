// Conversation with the model's own chat template: every turn renders the
// whole chat, and only the text after what the ids already stand for is
// tokenized, so the prompt grows by appending as it does with the built-in
// formats and the prefix cache keeps finding the earlier turns.

#include <algorithm>

#include "quire/engine/generator/conversation.h"

namespace quire::engine {
namespace {

std::string_view role_name(Role role) {
  return to_string(role);
}

}  // namespace

std::vector<TemplateMessage> Conversation::template_messages(std::size_t skip_from,
                                                             std::size_t skip_to) const {
  std::vector<TemplateMessage> out;
  const std::string& system = messages_.front().text;
  const bool fold_system = format_.system_in_first_user();
  if (!system.empty() && !fold_system) out.push_back({"system", system});
  bool first_user = true;
  for (std::size_t i = 1; i < messages_.size(); ++i) {
    if (i >= skip_from && i < skip_to) continue;
    const Message& message = messages_[i];
    TemplateMessage rendered{std::string(role_name(message.role)), message.text};
    rendered.tool_calls = message.tool_calls;
    // OpenAI sends null content beside calls when the reply had no text.
    rendered.null_content = !message.tool_calls.empty() && message.text.empty();
    rendered.tool_call_id = message.tool_call_id;
    rendered.images = static_cast<int>(message.images.size());
    rendered.name = message.tool_name;
    if (message.role == Role::User && first_user) {
      first_user = false;
      // Templates without a system turn: the system prompt opens the first
      // user message, as Quire's built-in formats for such models do.
      if (fold_system && !system.empty()) rendered.content = system + "\n\n" + rendered.content;
    }
    out.push_back(std::move(rendered));
  }
  return out;
}

jinja::Rendered Conversation::render_template(bool add_generation_prompt, std::size_t skip_from,
                                              std::size_t skip_to) const {
  const std::vector<TemplateMessage> messages = template_messages(skip_from, skip_to);
  return format_.chat_template()->render(messages, add_generation_prompt, template_tools());
}

TemplateTools Conversation::template_tools() const {
  TemplateTools tools;
  tools.tools = tools_;
  tools.arguments = tools::template_arguments_form(tool_format_);
  tools.keep_null_content = tools::template_keeps_null_content(tool_format_);
  return tools;
}

// Renders the prompt for the next reply; the last message (the user's, or
// the last tool result) takes the ids that are new. It may hold ids already
// (set_tools() renders an open prompt again).
void Conversation::open_template_prompt() {
  const jinja::Rendered rendered = render_template(/*add_generation_prompt=*/true);
  Message& user = messages_.back();
  if (rendered.text.starts_with(rendered_)) {
    const std::vector<std::int32_t> added = tokenize_rendered(rendered, rendered_.size());
    user.tokens.insert(user.tokens.end(), added.begin(), added.end());
    ids_.insert(ids_.end(), added.begin(), added.end());
    rendered_ = rendered.text;
    recomputed_ = 0;
    return;
  }

  // The template wrote the earlier turns differently this time. Keep the
  // longest common prefix of ids (the cache still holds it) and take the
  // rest from the new rendering.
  std::vector<std::int32_t> whole = tokenize_rendered(rendered, 0);
  const auto mismatch = std::mismatch(ids_.begin(), ids_.end(), whole.begin(), whole.end());
  const auto kept = static_cast<std::size_t>(mismatch.first - ids_.begin());
  recomputed_ = static_cast<std::int64_t>(ids_.size() - kept);

  // Messages keep the ids that survive; the rest of the prompt becomes the
  // last message's, so their concatenation stays the conversation.
  std::size_t offset = 0;
  std::size_t before_last = 0;
  for (std::size_t i = 0; i + 1 < messages_.size(); ++i) {
    std::vector<std::int32_t>& tokens = messages_[i].tokens;
    const std::size_t keep = std::min(tokens.size(), kept - std::min(kept, offset));
    offset += tokens.size();
    tokens.resize(keep);
    before_last += keep;
  }
  user.tokens.assign(whole.begin() + static_cast<std::ptrdiff_t>(before_last), whole.end());
  ids_ = std::move(whole);
  rendered_ = rendered.text;
}

// The template's side of fit(): the rules of plan_context(), with each
// candidate rendered, since a template may write a turn differently once its
// neighbours are gone.
std::optional<Trimmed> Conversation::fit_template(const ContextShape& shape, ContextPolicy policy,
                                                  std::int64_t before) {
  const std::int64_t room = shape.room();
  if (policy == ContextPolicy::Stop) {
    const ContextPlan plan = plan_context(policy, shape);
    throw ContextOverflow(stopped_message(plan, shape), before + shape.reserve + shape.incoming,
                          shape.context);
  }
  const std::vector<std::size_t> users = user_indices();
  const std::size_t turns = users.size();
  const std::size_t newest = turns - 1;
  const bool prompt_open = awaiting_reply();
  auto render_without = [&](std::size_t first, std::size_t count, jinja::Rendered& rendered) {
    rendered =
        render_template(prompt_open, turn_start(users, first), turn_start(users, first + count));
    return tokenize_rendered(rendered, 0, turn_start(users, first),
                             turn_start(users, first + count));
  };

  jinja::Rendered rendered;
  std::vector<std::int32_t> ids;
  // Truncate-middle keeps the first turn while it fits beside the newest.
  std::size_t first = 0;
  if (policy == ContextPolicy::TruncateMiddle && turns >= 3 &&
      static_cast<std::int64_t>(render_without(1, newest - 1, rendered).size()) <= room) {
    first = 1;
  }
  const std::int64_t target = room / 2;
  std::size_t count = 0;
  std::int64_t after = before;
  while (first + count < newest) {
    ++count;
    ids = render_without(first, count, rendered);
    after = static_cast<std::int64_t>(ids.size());
    if (after <= target) break;
  }
  if (count == 0 || after > room) {
    const std::int64_t needed = count == 0 ? before : after;
    throw ContextOverflow(
        "the system prompt and the newest turn take " + std::to_string(needed) + " tokens; with " +
            std::to_string(shape.reserve + shape.incoming) +
            " kept for the new message and the reply that exceeds the context of " +
            std::to_string(shape.context) +
            " tokens. Shorten the message or the system prompt, or allow a longer context",
        needed + shape.reserve + shape.incoming, shape.context);
  }
  // The shortened chat renders anew. The messages before the gap keep the
  // ids it shares with the old prompt; everything after those becomes the
  // last message's, so the messages' ids still concatenate to the prompt.
  std::size_t before_gap = 0;
  for (std::size_t i = 0; i < turn_start(users, first); ++i)
    before_gap += messages_[i].tokens.size();
  messages_.erase(
      messages_.begin() + static_cast<std::ptrdiff_t>(turn_start(users, first)),
      messages_.begin() + static_cast<std::ptrdiff_t>(turn_start(users, first + count)));
  const auto same = std::mismatch(ids_.begin(), ids_.end(), ids.begin(), ids.end());
  const auto kept = static_cast<std::size_t>(same.second - ids.begin());
  recomputed_ = static_cast<std::int64_t>(ids.size() - kept);
  std::size_t held = 0;
  for (Message& message : messages_) {
    const std::size_t keep = std::min(message.tokens.size(), std::min(kept, before_gap) - held);
    message.tokens.resize(keep);
    held += keep;
  }
  std::vector<std::int32_t>& last = messages_.back().tokens;
  last.insert(last.end(), ids.begin() + static_cast<std::ptrdiff_t>(held), ids.end());
  ids_ = std::move(ids);
  rendered_ = std::move(rendered.text);
  const auto reused = static_cast<std::int64_t>(kept) / kContextPageTokens * kContextPageTokens;
  return Trimmed(static_cast<int>(count), before - token_count(), static_cast<int>(first),
                 token_count() - reused);
}

}  // namespace quire::engine
