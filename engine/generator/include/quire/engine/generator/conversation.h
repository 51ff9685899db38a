#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/context_policy.h"
#include "quire/engine/generator/image_input.h"
#include "quire/engine/generator/prompt_format.h"
#include "quire/engine/tokenizer/tokenizer.h"
#include "quire/engine/tools/tool_call.h"

namespace quire::engine {

enum class Role { System, User, Assistant, Tool };
std::string_view to_string(Role role);  // "system", "user", "assistant", "tool"

// One message as a chat store keeps it: its text, and the token ids it adds
// to the conversation, markers included. The system message's ids are the
// preamble (BOS, the system block); a user message's end with the header that
// opens the reply; an assistant message's are the reply exactly as generated
// and the marker(s) that close it. Concatenated in order they are the
// conversation.
//
// With a chat template, an assistant message may carry the tool calls its
// reply made (its text is then the content around them, its ids still the
// reply as generated), and a Tool message answers one call: `text` is the
// result, `tool_call_id` the call's id, `tool_name` the function's name. The
// results of one reply share their ids: the last of them holds what the
// template wrote for all of them and the header that opens the next reply.
struct Message {
  Message() = default;
  Message(Role message_role, std::string message_text,
          std::vector<std::int32_t> message_tokens = {})
      : role(message_role), text(std::move(message_text)), tokens(std::move(message_tokens)) {}

  Role role = Role::User;
  std::string text;
  std::vector<std::int32_t> tokens;
  std::vector<tools::ToolCall> tool_calls;  // Assistant
  std::string tool_call_id;                 // Tool
  std::string tool_name;                    // Tool
  // User, with a chat template: images shown before the text, each placed
  // where the template writes its marker (PreparedImage). Their positions'
  // ids are in `tokens` (image_position_ids), the same each time the
  // message renders, so the cache keeps finding them.
  std::vector<std::shared_ptr<const PreparedImage>> images;

  friend bool operator==(const Message&, const Message&) = default;
};

// What fit() removed to make room: turns [first_turn, first_turn + turns)
// of those the conversation had, numbered from 0.
struct Trimmed {
  Trimmed() = default;
  Trimmed(int dropped_turns, std::int64_t dropped_tokens, int first, std::int64_t read_again)
      : turns(dropped_turns), tokens(dropped_tokens), first_turn(first), recomputed(read_again) {}

  int turns = 0;            // user messages dropped, each with what followed it
  std::int64_t tokens = 0;  // how much shorter the conversation became
  int first_turn = 0;       // 0 for drop-oldest; 1 where truncate-middle kept the first turn
  // Tokens of the shortened prompt the prefix cache cannot serve: all after
  // the last full page of what stayed unchanged at its start.
  std::int64_t recomputed = 0;

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
  // with the System message; then each turn is a User message and its
  // Assistant reply. With a chat template, a reply that made tool calls is
  // followed by a Tool message for each call (in any order) and then the
  // next reply, which may call tools again. It may end with a User or Tool
  // message still awaiting its reply (the prompt is then open, as after
  // begin_turn() or continue_turn()), or with a reply whose calls await their
  // results. Throws std::invalid_argument for another order, for a result
  // that answers no call of its reply, for tool messages or calls with a
  // built-in format, or for ids outside the vocabulary. With a chat template
  // the user messages' and results' ids are rendered again (the same ids, as
  // rendering is deterministic) and the replies' ids are kept as stored.
  // `tools`: what set_tools() takes, in effect for the whole chat
  // (std::logic_error for tools with a built-in format). Throws
  // ChatTemplateError when the template fails.
  static Conversation restore(ChatFormat format, const Tokenizer& tokenizer,
                              std::vector<Message> messages,
                              nlohmann::ordered_json tools = nullptr);

  // The tools the chat offers: OpenAI's list of {"type": "function",
  // "function": {"name", "description", "parameters"}}, passed to the
  // template's `tools` variable as given; null or an empty list offers none.
  // Tools change what the template writes before the first message, so the
  // ids are rendered again: at once while a prompt is open (ids() is the new
  // prompt), else with the next begin_turn() or continue_turn(); then
  // recomputed_tokens() says how many ids were lost. Throws std::logic_error
  // for a built-in format (only a model's chat template knows how its model
  // reads tools), std::invalid_argument for anything but an array or null,
  // ChatTemplateError when the template fails with them while a prompt is
  // open (nothing changes then).
  void set_tools(nlohmann::ordered_json tools);
  // The list set_tools() took; null when none.
  const nlohmann::ordered_json& tools() const { return tools_; }
  // The family the chat template writes tool calls in (what to parse a reply
  // with, tools::ToolCallStream); None for a built-in format or a template
  // that knows no tools.
  tools::ToolCallFormat tool_call_format() const { return tool_format_; }

  // Appends the user's message and the header of the reply; returns the whole
  // prompt. Throws std::logic_error while the previous turn awaits its reply
  // or the last reply's tool calls await their results, ChatTemplateError
  // when the model's template refuses the conversation.
  // `images` come before the text; they need the model's chat template
  // (std::logic_error with a built-in format) and a template that writes
  // each image's marker (ChatTemplateError naming how many it placed).
  std::vector<std::int32_t> begin_turn(
      std::string_view user_message, std::vector<std::shared_ptr<const PreparedImage>> images = {});

  // Where the images of the prompt (ids()) are, for JobRequest::images.
  std::vector<PromptImagePlacement> image_placements() const;

  // Appends the reply's ids as generated and the format's closing marker(s),
  // unless the reply already ends with them. With closed_by_stop_token, a
  // reply whose last id is one of stops().tokens keeps that id as its closing
  // marker, and only what follows the marker in the closing is added (the
  // generator may include or exclude the stopping token). `reply_text` is
  // what was shown (with tool calls: the content around them); without it,
  // the text is decoded from the ids. `tool_calls`: the calls parsed from the
  // reply (tools::parse_tool_calls), each with its id; the reply's ids stay
  // exactly as generated. Each call then needs its result
  // (add_tool_result()) before the chat goes on. Throws std::logic_error when
  // no turn awaits a reply, or for calls with a built-in format;
  // std::invalid_argument for calls without an id or name, two with one id,
  // or calls without reply_text.
  void end_turn(std::span<const std::int32_t> reply_tokens, bool closed_by_stop_token,
                std::optional<std::string_view> reply_text = std::nullopt,
                std::vector<tools::ToolCall> tool_calls = {});

  // Adds the result of one call of the last reply: `call_id` names the call,
  // `name` is the tool's (function's) name, `result` the text the model reads
  // (for a call that was refused or failed, say so in it). Nothing is
  // tokenized until continue_turn(). Throws std::logic_error unless the last
  // reply made calls and the prompt is not open; std::invalid_argument for
  // an id that names none of its calls or one already answered.
  void add_tool_result(std::string_view call_id, std::string_view name, std::string_view result);

  // The calls of the last reply that have no result yet, in the reply's
  // order; empty when the last message is no reply with calls.
  std::vector<tools::ToolCall> pending_tool_calls() const;

  // Opens the prompt for the model's next reply after the tool results,
  // without a new user message: the results and the header of the reply are
  // appended; returns the whole prompt. end_turn() then takes the reply (which
  // may call tools again). Throws std::logic_error unless the last message is
  // a tool result and every call of its reply has one; ChatTemplateError when
  // the template refuses the conversation (nothing changes).
  std::vector<std::int32_t> continue_turn();

  // Makes room for a reply of reserve_for_reply tokens in a context of
  // max_tokens, as `policy` says (context_policy.h has the exact rules).
  // Nothing happens while it fits. DropOldest and TruncateMiddle drop whole
  // turns (a user message with its replies, tool calls and results, so no
  // call is ever kept without its result) in one step, until the
  // conversation fills about half of what the reply leaves: fewer, larger
  // drops, as each one costs a re-read of what follows the change. The system
  // prompt and the newest turn always stay; TruncateMiddle keeps the first
  // turn too while it fits. With a chat template each candidate is rendered,
  // as a template may write a turn differently after the drop. Returns what
  // was dropped; throws ContextOverflow, changing nothing, when even the
  // system prompt and the newest turn leave too little room, or with Stop
  // when the conversation does not fit (its message says by how much and
  // what to do).
  // `incoming`: tokens of a message about to be sent that is not in the
  // conversation yet (begin_turn() comes after), kept besides the reply.
  std::optional<Trimmed> fit(std::int64_t max_tokens, std::int64_t reserve_for_reply,
                             ContextPolicy policy = ContextPolicy::DropOldest,
                             std::int64_t incoming = 0);
  // The conversation as token counts for plan_context(): the preamble and
  // each turn's ids (for a chat template, as its messages hold them now).
  ContextShape context_shape(std::int64_t max_tokens, std::int64_t reserve_for_reply,
                             std::int64_t incoming = 0) const;

  // The whole conversation; after begin_turn(), the prompt.
  const std::vector<std::int32_t>& ids() const { return ids_; }
  std::int64_t token_count() const { return static_cast<std::int64_t>(ids_.size()); }
  // The System message first, then the turns.
  const std::vector<Message>& messages() const { return messages_; }
  int turn_count() const;  // user messages
  // A prompt is open: after begin_turn() or continue_turn(), until end_turn().
  bool awaiting_reply() const { return open_; }
  const std::string& system_prompt() const { return messages_.front().text; }
  const ChatFormat& format() const { return format_; }
  // The prompt as the model reads it, special tokens spelled out.
  std::string text() const;
  // How many ids of the conversation the last begin_turn(), continue_turn(),
  // set_tools() or fit() could not keep; 0 when the new prompt extended the
  // previous one.
  std::int64_t recomputed_tokens() const { return recomputed_; }
  // What ends a reply in this format, for the generator's stop conditions.
  const StopSet& stops() const { return stops_; }

 private:
  Conversation(ChatFormat format, const Tokenizer& tokenizer, std::vector<Message> messages);
  std::vector<std::int32_t> render_user(std::string_view text, bool first) const;
  void rebuild_ids();
  const PromptFormat& builtin() const { return PromptFormat::get(format_.builtin()); }

  // The chat template's side (conversation_template.cpp).
  // The messages but those in [skip_from, skip_to) (message indices).
  std::vector<TemplateMessage> template_messages(std::size_t skip_from, std::size_t skip_to) const;
  jinja::Rendered render_template(bool add_generation_prompt, std::size_t skip_from = 1,
                                  std::size_t skip_to = 1) const;
  // The ids of rendered.text from byte `from` on, for a rendering of the
  // messages but [skip_from, skip_to): their images' markers replaced by
  // the images' text and the position runs by the images' ids
  // (conversation_images.cpp).
  std::vector<std::int32_t> tokenize_rendered(const jinja::Rendered& rendered, std::size_t from,
                                              std::size_t skip_from = 1,
                                              std::size_t skip_to = 1) const;
  std::vector<std::shared_ptr<const PreparedImage>> images_of(std::size_t skip_from,
                                                              std::size_t skip_to) const;
  void open_template_prompt();
  TemplateTools template_tools() const;
  std::vector<std::size_t> user_indices() const;
  void check_tool_calls(const std::vector<tools::ToolCall>& calls) const;
  std::optional<std::size_t> last_calling_reply() const;
  std::optional<Trimmed> fit_template(const ContextShape& shape, ContextPolicy policy,
                                      std::int64_t before);
  // Message index where turn `turn` begins; messages_.size() past the last.
  std::size_t turn_start(const std::vector<std::size_t>& users, std::size_t turn) const;

  ChatFormat format_;
  const Tokenizer* tokenizer_;
  StopSet stops_;
  std::vector<Message> messages_;
  std::vector<std::int32_t> ids_;
  bool open_ = false;
  nlohmann::ordered_json tools_;
  tools::ToolCallFormat tool_format_ = tools::ToolCallFormat::None;
  // With a chat template: the text ids_ stand for.
  std::string rendered_;
  std::int64_t recomputed_ = 0;
};

}  // namespace quire::engine
