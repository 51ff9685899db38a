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

std::vector<TemplateMessage> Conversation::template_messages(std::size_t first_kept_user) const {
  std::vector<TemplateMessage> out;
  const std::string& system = messages_.front().text;
  const bool fold_system = format_.system_in_first_user();
  if (!system.empty() && !fold_system) out.push_back({"system", system});
  bool first_user = true;
  for (std::size_t i = first_kept_user; i < messages_.size(); ++i) {
    const Message& message = messages_[i];
    TemplateMessage rendered{std::string(role_name(message.role)), message.text};
    rendered.tool_calls = message.tool_calls;
    // OpenAI sends null content beside calls when the reply had no text.
    rendered.null_content = !message.tool_calls.empty() && message.text.empty();
    rendered.tool_call_id = message.tool_call_id;
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

jinja::Rendered Conversation::render_template(std::size_t first_kept_user,
                                              bool add_generation_prompt) const {
  const std::vector<TemplateMessage> messages = template_messages(first_kept_user);
  return format_.chat_template()->render(messages, add_generation_prompt, template_tools());
}

TemplateTools Conversation::template_tools() const {
  TemplateTools tools;
  tools.tools = tools_;
  tools.arguments = tools::template_arguments_form(tool_format_);
  tools.keep_null_content = tools::template_keeps_null_content(tool_format_);
  return tools;
}

// Tokenizes rendered.text from byte `from` on: special tokens the template
// wrote become their ids, while the literal ranges (message texts) stay text.
std::vector<std::int32_t> Conversation::tokenize_rendered(const jinja::Rendered& rendered,
                                                          std::size_t from) const {
  return encode_rendered(*tokenizer_, rendered, from);
}

// Renders the prompt for the next reply; the last message (the user's, or
// the last tool result) takes the ids that are new. It may hold ids already
// (set_tools() renders an open prompt again).
void Conversation::open_template_prompt() {
  const jinja::Rendered rendered = render_template(1, /*add_generation_prompt=*/true);
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

std::optional<Trimmed> Conversation::fit_template(std::int64_t max_tokens,
                                                  std::int64_t reserve_for_reply,
                                                  std::int64_t before) {
  const std::int64_t room = max_tokens - reserve_for_reply;
  const std::vector<std::size_t> users = user_indices();
  const int turns = static_cast<int>(users.size());
  const bool prompt_open = awaiting_reply();
  const std::int64_t target = room / 2;
  int drop = 0;
  std::int64_t after = before;
  jinja::Rendered rendered;
  std::vector<std::int32_t> ids;
  for (int k = 1; k < turns; ++k) {
    rendered = render_template(users[static_cast<std::size_t>(k)], prompt_open);
    ids = tokenize_rendered(rendered, 0);
    after = static_cast<std::int64_t>(ids.size());
    drop = k;
    if (after <= target) break;
  }
  if (drop == 0 || after > room) {
    const std::int64_t needed = drop == 0 ? before : after;
    throw ContextOverflow(
        "the system prompt and the newest message take " + std::to_string(needed) +
            " tokens; with " + std::to_string(reserve_for_reply) +
            " kept for the reply that exceeds the context of " + std::to_string(max_tokens) +
            " tokens. Shorten the message or the system prompt, or allow a "
            "longer context",
        needed + reserve_for_reply, max_tokens);
  }
  const auto first_kept = static_cast<std::ptrdiff_t>(users[static_cast<std::size_t>(drop)]);
  messages_.erase(messages_.begin() + 1, messages_.begin() + first_kept);
  // The shortened chat renders anew from its first token; it all belongs to
  // the preamble now, the kept messages keep their texts.
  for (Message& message : messages_)
    message.tokens.clear();
  messages_.front().tokens = ids;
  ids_ = std::move(ids);
  rendered_ = std::move(rendered.text);
  recomputed_ = static_cast<std::int64_t>(ids_.size());
  return Trimmed{drop, before - token_count()};
}

}  // namespace quire::engine
