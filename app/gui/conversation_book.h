#pragma once

// The engine's view of each chat: a Conversation of token ids per chat,
// restored from the ids the store kept (or rendered afresh from the text when
// they are stale), so that each turn's prompt extends the previous one token
// for token and the prefix cache finds every full page of it. Lives on the
// engine thread.

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "engine_messages.h"
#include "quire/engine/generator/chat_format.h"
#include "quire/engine/generator/conversation.h"
#include "quire/engine/generator/job.h"
#include "quire/engine/image_prompts/image_preparer.h"
#include "quire/engine/tools/tool_call_parser.h"

namespace quire::gui {

class ConversationBook {
 public:
  // `model_directory` takes part in the render key (see ModelInfo::render_key).
  ConversationBook(const engine::Tokenizer& tokenizer, engine::ChatFormat format,
                   QString model_directory);

  struct Turn {
    std::vector<std::int32_t> prompt;
    engine::StopSet stops;  // where a reply ends in this format
    int max_new_tokens = 0;
    std::int64_t context_limit = 0;
    // What the chat's context policy dropped for this turn; nullopt: nothing.
    std::optional<engine::Trimmed> trimmed;
    std::int64_t reserve = 0;  // kept for the reply when fitting
    // Messages rendered afresh for this turn (ids worth storing), the new
    // user message (or the last result) included.
    QList<RenderedMessage> rendered;
    // The format the model writes tool calls in; None when it knows none.
    engine::tools::ToolCallFormat tool_format = engine::tools::ToolCallFormat::None;
    // Where the prompt's images are (engine::JobRequest::images).
    std::vector<engine::PromptImagePlacement> images;
  };

  // What bounds one conversation besides request.max_context (the setting).
  struct Limits {
    std::int64_t cache_tokens = 0;
    std::int64_t model_tokens = 0;  // max_position_embeddings; 0: unknown
  };

  // Opens the turn answering the last message of request.history: a user
  // message, or the results of a reply's tool calls, which the next reply
  // goes on from. Throws engine::ContextOverflow when the message cannot fit
  // (its message names what limits the context and what the user can do),
  // std::invalid_argument for a history in another order.
  Turn begin(const ReplyRequest& request, const Limits& limits);

  struct Closed {
    RenderedMessage reply;  // the reply's ids, closing marker included
    std::int64_t context_used = 0;
    ContextTurns turns;  // the conversation as the engine now holds it
  };
  // Records the reply of the chat's open turn: its ids as generated, and
  // `reply`, its text read for tool calls (content and calls). A failed
  // reply leaves no conversation behind: the next turn is built from the
  // store again.
  Closed end(qint64 chat_id, qint64 reply_id, const engine::JobResult& result,
             const engine::tools::ParsedReply& reply);
  void forget(qint64 chat_id) { chats_.erase(chat_id); }
  void clear() { chats_.clear(); }
  bool contains(qint64 chat_id) const { return chats_.contains(chat_id); }

  QString render_key(const QString& system_prompt) const;
  const engine::ChatFormat& format() const { return format_; }

  // The model's vision side, for user messages that hold images; without
  // one, a message's images are refused (std::invalid_argument).
  void set_image_preparer(std::shared_ptr<engine::ImagePreparer> preparer);

 private:
  struct Entry {
    engine::Conversation conversation;
    std::vector<qint64> ids;  // store ids of messages()[1..]
    QString system_prompt;
    // Turns were dropped: ids is the first `head` ids of the history (what
    // truncate-middle keeps at the start) followed by its newest ones.
    bool trimmed = false;
    std::size_t head = 0;
  };
  ContextTurns turns_of(const Entry& entry) const;

  bool matches(const Entry& entry, const QList<TurnMessage>& completed,
               const QString& system_prompt, const nlohmann::ordered_json& tools) const;
  Entry build(const QList<TurnMessage>& completed, const ReplyRequest& request,
              QList<RenderedMessage>& rendered) const;
  std::vector<std::int32_t> preamble(const std::string& system_prompt) const;
  // A message's images as its prompt holds them, prepared once per file
  // (by SHA-256) while the book lives. Throws what decoding and the
  // processor throw, with the image's number.
  std::vector<std::shared_ptr<const engine::PreparedImage>> prepared(
      const TurnMessage& message) const;
  engine::Message engine_message(const TurnMessage& message) const;

  const engine::Tokenizer& tokenizer_;
  engine::ChatFormat format_;
  QString model_directory_;
  std::map<qint64, Entry> chats_;
  std::shared_ptr<engine::ImagePreparer> images_;
  mutable std::map<QByteArray, std::shared_ptr<const engine::PreparedImage>> prepared_;
};

}  // namespace quire::gui
