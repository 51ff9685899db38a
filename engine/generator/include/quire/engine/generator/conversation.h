#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/engine/tokenizer/tokenizer.h"

namespace quire::engine {

enum class Role { System, User, Assistant };
std::string_view to_string(Role role);  // "system", "user", "assistant"

// One message as a chat store keeps it: its text, and the token ids it adds
// to the conversation, markers included. The system message's ids are the
// preamble (BOS, the system block); a user message's end with the header that
// opens the reply; an assistant message's are the reply exactly as generated
// and the marker(s) that close it. Concatenated in order they are the
// conversation.
struct Message {
  Role role = Role::User;
  std::string text;
  std::vector<std::int32_t> tokens;

  friend bool operator==(const Message&, const Message&) = default;
};

// What fit() removed to make room.
struct Trimmed {
  int turns = 0;            // user messages dropped, each with its reply
  std::int64_t tokens = 0;  // how much shorter the conversation became

  friend bool operator==(const Trimmed&, const Trimmed&) = default;
};

// The system prompt and the newest message alone do not fit the context.
class ContextOverflow : public std::length_error {
 public:
  ContextOverflow(const std::string& message, std::int64_t needed, std::int64_t available)
      : std::length_error(message), needed_(needed), available_(available) {}
  std::int64_t needed() const { return needed_; }        // tokens, the reply reserve included
  std::int64_t available() const { return available_; }  // the context's tokens
 private:
  std::int64_t needed_;
  std::int64_t available_;
};

// A chat in one format, kept as token ids. Each turn's prompt is the previous
// prompt, the previous reply's ids exactly as generated (never re-tokenized)
// and the new message, so the KV cache finds every full page of the previous
// turn. Only fit() rewrites the beginning, rarely and in one large step.
//
// With a built-in format, each message renders on its own. With the model's
// chat template, each turn renders the whole conversation, takes the text
// after what the ids already cover and tokenizes only that (special tokens
// recognised, except inside message texts). A template that rewrites earlier
// turns (Qwen3 drops the reasoning of earlier replies) makes the new text
// differ from what the ids cover: then the whole prompt is tokenized again,
// the ids keep their longest common prefix with it, and recomputed_tokens()
// says how many of the old ids had to go. The tokenizer must outlive the
// conversation.
class Conversation {
 public:
  Conversation(ChatFormat format, const Tokenizer& tokenizer, std::string system_prompt = {});

  // A conversation as stored, without tokenizing anything. `messages` starts
  // with the System message, then alternates User and Assistant; it may end
  // with a User message still awaiting its reply. Throws
  // std::invalid_argument for another order or for ids outside the
  // vocabulary. With a chat template the user messages' ids are rendered
  // again (the same ids, as rendering is deterministic) and the replies' ids
  // are kept as stored. Throws ChatTemplateError when the template fails.
  static Conversation restore(ChatFormat format, const Tokenizer& tokenizer,
                              std::vector<Message> messages);

  // Appends the user's message and the header of the reply; returns the whole
  // prompt. Throws std::logic_error while the previous turn awaits its reply,
  // ChatTemplateError when the model's template refuses the conversation.
  std::vector<std::int32_t> begin_turn(std::string_view user_message);

  // Appends the reply's ids as generated and the format's closing marker(s),
  // unless the reply already ends with them. With closed_by_stop_token, a
  // reply whose last id is one of stops().tokens keeps that id as its closing
  // marker, and only what follows the marker in the closing is added (the
  // generator may include or exclude the stopping token). `reply_text` is
  // what was shown; without it, the text is decoded from the ids. Throws
  // std::logic_error when no turn awaits a reply.
  void end_turn(std::span<const std::int32_t> reply_tokens, bool closed_by_stop_token,
                std::optional<std::string_view> reply_text = std::nullopt);

  // Makes room for a reply of reserve_for_reply tokens in a context of
  // max_tokens. Nothing happens while it fits. Otherwise the oldest turns go
  // in one step, until the conversation fills about half of what the reply
  // leaves (fewer, larger trims: each one costs a full re-read of the prompt);
  // the system prompt and the newest user message always stay. Returns what
  // was dropped; throws ContextOverflow, changing nothing, when even the
  // system prompt and the newest message leave too little room.
  std::optional<Trimmed> fit(std::int64_t max_tokens, std::int64_t reserve_for_reply);

  // The whole conversation; after begin_turn(), the prompt.
  const std::vector<std::int32_t>& ids() const { return ids_; }
  std::int64_t token_count() const { return static_cast<std::int64_t>(ids_.size()); }
  // The System message first, then the turns.
  const std::vector<Message>& messages() const { return messages_; }
  int turn_count() const;  // user messages
  bool awaiting_reply() const;
  const std::string& system_prompt() const { return messages_.front().text; }
  const ChatFormat& format() const { return format_; }
  // The prompt as the model reads it, special tokens spelled out.
  std::string text() const;
  // How many ids of the conversation the last begin_turn() or fit() could
  // not keep; 0 when the new prompt extended the previous one.
  std::int64_t recomputed_tokens() const { return recomputed_; }
  // What ends a reply in this format, for the generator's stop conditions.
  const StopSet& stops() const { return stops_; }

 private:
  Conversation(ChatFormat format, const Tokenizer& tokenizer, std::vector<Message> messages);
  std::vector<std::int32_t> render_user(std::string_view text, bool first) const;
  void rebuild_ids();
  const PromptFormat& builtin() const { return PromptFormat::get(format_.builtin()); }

  // The chat template's side (conversation_template.cpp).
  std::vector<TemplateMessage> template_messages(std::size_t first_kept_user) const;
  jinja::Rendered render_template(std::size_t first_kept_user, bool add_generation_prompt) const;
  std::vector<std::int32_t> tokenize_rendered(const jinja::Rendered& rendered,
                                              std::size_t from) const;
  void begin_template_turn();
  std::optional<Trimmed> fit_template(std::int64_t max_tokens, std::int64_t reserve_for_reply,
                                      std::int64_t before);

  ChatFormat format_;
  const Tokenizer* tokenizer_;
  StopSet stops_;
  std::vector<Message> messages_;
  std::vector<std::int32_t> ids_;
  // With a chat template: the text ids_ stand for.
  std::string rendered_;
  std::int64_t recomputed_ = 0;
};

}  // namespace quire::engine
